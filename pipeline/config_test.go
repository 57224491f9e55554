package pipeline

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/verify/abi"
)

func TestParseBenchMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want BenchMode
		ok   bool
	}{
		{"quick", BenchQuick, true},
		{"report", BenchReport, true},
		{"", "", false},
		{"full", "", false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBenchMode(tt.in)
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("= %q, %v; want %q, ok %v", got, err, tt.want, tt.ok)
			}
		})
	}
}

// --stages names stages of the list, and selects those alone; none given
// selects all of them. "report" is no stage, and selects nothing.
func TestParseStageSet(t *testing.T) {
	for _, tt := range []struct {
		name  string
		items []string
		ok    bool
		names []string // Names() of the set
	}{
		{"some", []string{"checkout", "codediff"}, true, []string{"checkout", "codediff"}},
		{"as given", []string{"tests", "checkout"}, true, []string{"tests", "checkout"}},
		{"unknown", []string{"checkout", "lint"}, false, nil},
		// The report is every run's last step; scripts still name it.
		{"and the report", []string{"checkout", "report"}, true, []string{"checkout"}},
		{"the report alone", []string{"report"}, true, []string{}},
		// A comment's stages= reaches here without the CLI's list check.
		{"a stage twice", []string{"checkout", "build", "checkout"}, false, nil},
		{"the report twice", []string{"report", "report"}, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseStageSet(tt.items)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if !tt.ok {
				return
			}
			if d := cmp.Diff(tt.names, s.Names()); d != "" {
				t.Errorf("names (-want +got):\n%s", d)
			}
			for _, st := range Stages() {
				want := false
				for _, n := range tt.names {
					want = want || n == st.String()
				}
				if s.Has(st.String()) != want {
					t.Errorf("Has(%s) = %v", st, !want)
				}
			}
		})
	}
	var all StageSet
	if d := cmp.Diff(StageNames(), all.Names()); d != "" {
		t.Errorf("the zero set's names (-want +got):\n%s", d)
	}
	for _, st := range Stages() {
		if !all.Has(st.String()) {
			t.Errorf("the zero set does not select %s", st)
		}
	}
}

// results.json's settings are spelled as they were when the Config held
// strings: the typed values serialise to the same names.
func TestSettingsJSON(t *testing.T) {
	stages, err := ParseStageSet([]string{"checkout", "build"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"defaults", Config{Jobs: 3},
			`{"repo":"demo (PHP 8.2.32 + mysqlnd atomic statistics)","demo":true,"variants":["nts","zts"],"builder":"host","profile":"mysql","profile_text":"mysqlnd, mysqli, pdo_mysql with OpenSSL and zlib, and OPcache beside the Apache module; nothing else","jobs":3,` +
				`"stages":["checkout","build","modules","codediff","abi","tests","race","bench"],"expect_nts_noop":false,"abi":"fail"}`},
		{"given", Config{Repo: DefaultRepo, PR: 7, Variants: []builders.Variant{builders.ZTS}, Builder: builders.KindDocker,
			Profile: builders.ProfileOfficial, Jobs: 2, Stages: stages, ExpectNTSNoop: true, ABI: abi.Warn},
			`{"repo":"https://github.com/php/php-src","pr":7,"demo":false,"variants":["zts"],"builder":"docker","profile":"official","profile_text":"docker-library's configure line plus mysqli and pdo_mysql","jobs":2,` +
				`"stages":["checkout","build"],"expect_nts_noop":true,"abi":"warn"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.setDefaults()
			b, err := json.Marshal(settingsOf(&tt.cfg))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, string(b)); d != "" {
				t.Errorf("settings (-want +got):\n%s", d)
			}
		})
	}
}
