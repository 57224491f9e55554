package perfprof

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/patchproof/patchproof/internal/golden"
)

// lockspin.perf-script is the first 24 samples of perf script's text of
// testdata/lockspin.c, recorded with -F 99 -g on an x86-64 VM.
func parseGolden(t *testing.T) *Stacks {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lockspin.perf-script"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseGoldenFolded(t *testing.T) {
	s := parseGolden(t)
	if s.Samples != 24 {
		t.Errorf("Samples = %d, want 24", s.Samples)
	}
	var b bytes.Buffer
	if err := s.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "lockspin.folded"), b.Bytes())
}

func TestParseGoldenSummaries(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	const kernel = "[kernel.kallsyms]"
	s := parseGolden(t)
	approx := cmpopts.EquateApprox(0, 1e-9)
	for _, tt := range []struct {
		name string
		got  func() any
		want any
	}{
		{
			name: "top 5",
			got:  func() any { return s.Top(5) },
			want: []Symbol{
				{Name: "work", DSO: "/tmp/pp/lockspin", Samples: 7, Share: 7.0 / 24},
				{Name: "pthread_mutex_lock", DSO: libc, Samples: 4, Share: 4.0 / 24},
				{Name: "__GI___lll_lock_wait", DSO: libc, Samples: 3, Share: 3.0 / 24},
				{Name: "__GI___pthread_mutex_unlock_usercnt", DSO: libc, Samples: 3, Share: 3.0 / 24},
				{Name: "get_futex_key", DSO: kernel, Samples: 2, Share: 2.0 / 24},
			},
		},
		{
			// Every sample but work's is in the mutex or its syscalls.
			name: "locks",
			got: func() any {
				share, syms := s.Locks()
				return struct {
					Share float64
					Syms  []Symbol
				}{share, syms}
			},
			want: struct {
				Share float64
				Syms  []Symbol
			}{17.0 / 24, []Symbol{
				{Name: "pthread_mutex_lock", DSO: libc, Samples: 4, Share: 4.0 / 24},
				{Name: "__GI___lll_lock_wait", DSO: libc, Samples: 3, Share: 3.0 / 24},
				{Name: "__GI___pthread_mutex_unlock_usercnt", DSO: libc, Samples: 3, Share: 3.0 / 24},
				{Name: "futex_wake", DSO: kernel, Samples: 2, Share: 2.0 / 24},
				{Name: "get_futex_key", DSO: kernel, Samples: 2, Share: 2.0 / 24},
				{Name: "__GI___lll_lock_wake", DSO: libc, Samples: 1, Share: 1.0 / 24},
				{Name: "futex_q_lock", DSO: kernel, Samples: 1, Share: 1.0 / 24},
				{Name: "futex_q_unlock", DSO: kernel, Samples: 1, Share: 1.0 / 24},
			}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.got(), approx); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want *Stacks
	}{
		{
			name: "empty",
			in:   "",
			want: &Stacks{},
		},
		{
			name: "names perf could not resolve",
			in: "php 7 \n" +
				"\tffffffff81000130 [unknown] ([kernel.kallsyms])\n" +
				"\t7f00000011 [unknown] (/usr/lib/apache2/modules/libphp.so)\n" +
				"\t7f00000022 [unknown] ([unknown])\n\n",
			want: &Stacks{Samples: 1, Stacks: []Stack{{Comm: "php", Count: 1, Frames: []Frame{
				{Name: "[unknown]", DSO: "[unknown]"},
				{Name: "[libphp.so]", DSO: "/usr/lib/apache2/modules/libphp.so"},
				{Name: "[kernel.kallsyms]", DSO: "[kernel.kallsyms]", Kernel: true},
			}}}},
		},
		{
			name: "spaces and parentheses in names",
			in: "php-fpm: pool www 123 \n" +
				"\t4011 std::vector<int, std::allocator<int> >::push_back(int const&) (/opt/a b/libx.so (deleted))\n" +
				"\t4022 (anonymous namespace)::run() (/opt/a b/libx.so (deleted))\n\n",
			want: &Stacks{Samples: 1, Stacks: []Stack{{Comm: "php-fpm: pool www", Count: 1, Frames: []Frame{
				{Name: "(anonymous namespace)::run()", DSO: "/opt/a b/libx.so (deleted)"},
				{Name: "std::vector<int, std::allocator<int> >::push_back(int const&)", DSO: "/opt/a b/libx.so (deleted)"},
			}}}},
		},
		{
			// Two threads with one stack are one stack of two samples; the
			// default symbol version is dropped, a PLT stub keeps its @plt.
			name: "merged",
			in: "apache2 10\n\t8c373 pthread_mutex_lock@@GLIBC_2.2.5 (/lib/libc.so.6)\n\t1000 apr_x@plt (/lib/libapr.so)\n\n" +
				"apache2 11\n\t8c373 pthread_mutex_lock@@GLIBC_2.2.5 (/lib/libc.so.6)\n\t1000 apr_x@plt (/lib/libapr.so)\n" +
				"apache2 12\n\t11da work (/bin/w)\n",
			want: &Stacks{Samples: 3, Stacks: []Stack{
				{Comm: "apache2", Count: 2, Frames: []Frame{
					{Name: "apr_x@plt", DSO: "/lib/libapr.so"},
					{Name: "pthread_mutex_lock", DSO: "/lib/libc.so.6"},
				}},
				{Comm: "apache2", Count: 1, Frames: []Frame{{Name: "work", DSO: "/bin/w"}}},
			}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseBad(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"frame before a header", "\t11da work (/bin/w)\n"},
		{"address not hexadecimal", "w 1\n\tzz work (/bin/w)\n"},
		{"header without a thread ID", "w\n\t11da work (/bin/w)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if s, err := Parse(strings.NewReader(tt.in)); err == nil {
				t.Errorf("no error; stacks %+v", s)
			}
		})
	}
}

func TestLocks(t *testing.T) {
	const libc = "/lib/libc.so.6"
	user := func(name string) Frame { return Frame{Name: name, DSO: libc} }
	kern := func(name string) Frame { return Frame{Name: name, DSO: "[kernel.kallsyms]", Kernel: true} }
	for _, tt := range []struct {
		name   string
		frames []Frame
		want   string // the lock function charged, "" for none
	}{
		{"mutex fast path", []Frame{user("work"), user("pthread_mutex_lock")}, "pthread_mutex_lock"},
		{"glibc alias", []Frame{user("__GI___pthread_mutex_unlock_usercnt")}, "__GI___pthread_mutex_unlock_usercnt"},
		{"rwlock", []Frame{user("__pthread_rwlock_rdlock_full64")}, "__pthread_rwlock_rdlock_full64"},
		{"futex syscall's spinlock", []Frame{user("__lll_lock_wait"), kern("do_syscall_64"), kern("futex_wait_setup"), kern("_raw_spin_lock")}, "futex_wait_setup"},
		{"syscall entry of a lock wake", []Frame{user("__GI___lll_lock_wake"), kern("entry_SYSCALL_64_after_hwframe"), kern("do_syscall_64")}, "__GI___lll_lock_wake"},
		{"interrupt in user code", []Frame{user("pthread_mutex_lock"), user("work"), kern("asm_sysvec_apic_timer_interrupt")}, ""},
		{"lock a caller deeper", []Frame{user("pthread_mutex_lock"), user("work")}, ""},
		{"a wrapper is not the lock", []Frame{user("tsrm_mutex_lock")}, ""},
		{"no frames", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := lockFrame(tt.frames)
			if got := map[bool]string{true: f.Name}[ok]; got != tt.want {
				t.Errorf("lock frame %q, want %q", got, tt.want)
			}
		})
	}
}
