package safefs

// trusted are the places outside this package that may touch a file
// directly (the calls of touches), by "file:function", "file:" or "dir/",
// each with why no code under test can have written or placed that file,
// or why the touch is safe where it could have.
var trusted = map[string]string{
	// The kernel's and the machine's.
	"internal/hostwatch/":               "/proc, the kernel's",
	"internal/proc/nspid.go:":           "/proc, the kernel's",
	"internal/proc/owner.go:":           "/proc, the kernel's",
	"internal/proc/tree.go:":            "/proc, the kernel's",
	"internal/aptsource/aptsource.go:":  "the machine's apt sources under /etc",
	"pipeline/run.go:machine":           "/proc and /etc/os-release, the kernel's and the machine's",
	"pipeline/doctor.go:paranoidCheck":  "/proc/sys/kernel/perf_event_paranoid, the kernel's",
	"pipeline/doctor.go:cgroupCheck":    "/proc/self/cgroup and cgroupfs, the kernel's",
	"workloads/bench/benchtxt.go:":      "/proc/cpuinfo, the kernel's",
	"workloads/cputime/":                "/proc and cgroupfs, the kernel's",
	"workloads/lockcount/owner.go:":     "/proc/PID/maps and mem of the server, the kernel's",
	"workloads/perfprof/record.go:comm": "/proc/PID/comm, the kernel's",

	// The runner's, before or apart from any code under test.
	"cmd/patchproof/plan.go:plan":           "the Actions event file: the runner's, read before any code under test runs",
	"cmd/patchproof/plan.go:writeOutputs":   "$GITHUB_OUTPUT, opened to append: the runner's",
	"pipeline/report/publish.go:appendFile": "$GITHUB_STEP_SUMMARY, opened to append: the runner's",
	"pipeline/run.go:prepareOut":            "a probe of --out before the run writes anything: CreateTemp's O_EXCL name, removed at once",
	"workloads/load/wrk.go:writeScript":     "wrk's script in the system's temporary directory: CreateTemp's O_EXCL name, patchproof's alone",

	// patchproof's own cache and records, never bound into a container
	// nor written by a build.
	"internal/cachedir/cachedir.go:": "the cache's lock and metadata files, written by patchproof",
	"internal/proc/reaper.go:":       "the run's claim on its directory and the runs' records, patchproof's",
	"internal/proc/runs.go:":         "the records of the runs of this host, in the cache, patchproof's",
	"builders/prune.go:markUsed":     "KEY.used beside a cache entry, in the builds directory no build writes",
	"pipeline/results/file.go:":      "results.json: written by patchproof with CreateTemp's O_EXCL name and a rename, read with a bound",
	"pipeline/demo/demo.go:":         "the demo's tarball (checksum-verified) and its temporary download, patchproof's",

	// Beneath a root, a link refused: the boundary's own rules, inline
	// where a whole entry is walked with one root.
	"builders/store.go:digest":         "Lstat, then O_NOFOLLOW beneath the entry's os.Root: a link is refused; hashed as a stream, no bound needed",
	"builders/files.go:verifyFiles":    "O_NOFOLLOW beneath the entry's os.Root, read with a bound (maxFilesFile)",
	"builders/libtool.go:installShim":  "removed, then made with O_EXCL beneath the tree's os.Root: never through a link",
	"pipeline/checkout/export.go:file": "a tree exported into a new directory: O_EXCL beneath its os.Root, bounded by the blob's header",

	// Tests' tools, never part of a run.
	"internal/golden/golden.go:":              "golden files of the tests, in this repository",
	"workloads/httpd/httpdtest/httpdtest.go:": "a test's fake build, in the test's temporary directory",
	"cmd/githubfake/main.go:serve":            "the fake GitHub's URL file, a test tool's",
	"cmd/hostwatch/main.go:main":              "hostwatch's report, a test tool's",

	// The parsers of what a build made: debug/elf and debug/dwarf over a
	// file opened through the boundary, whose sections safefs.NewELF and
	// CheckELF held to the file's size and their caps first, in the
	// confined child (internal/confine).
	"verify/abi/types.go:readTypes":         "the DWARF of a file opened with safefs.OpenELF, its sections checked, its type chains checked before debug/dwarf follows them",
	"verify/codediff/object.go:sectionData": "a section of an object opened with safefs.NewELF, checked against the file and its caps",
	"verify/codediff/object.go:readRelocs":  "a relocation section of an object opened with safefs.NewELF, checked against the file and its caps",

	// Test helpers in a non-test file.
	"internal/safefs/safefstest/": "crafts hostile objects from a real gcc -c object in a test's temporary directory",
}
