package perfprof

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/golden"
)

// small is a profile of two threads' worth of stacks, a kernel frame and a
// lock among them.
var small = &Stacks{Samples: 10, Stacks: []Stack{
	{Comm: "httpd", Count: 6, Frames: []Frame{{Name: "main"}, {Name: "execute"}}},
	{Comm: "httpd", Count: 3, Frames: []Frame{{Name: "main"}, {Name: "pthread_mutex_lock"}}},
	{Comm: "httpd", Count: 1, Frames: []Frame{{Name: "main"}, {Name: "__lll_lock_wait"}, {Name: "do_futex", Kernel: true}}},
}}

// wellFormed reads an SVG to its end with encoding/xml, and returns the
// text of its <title>s, the frames' hover text.
func wellFormed(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var titles []string
	inTitle := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return titles
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inTitle = tok.Name.Local == "title"
		case xml.CharData:
			if inTitle {
				titles = append(titles, string(tok))
			}
		case xml.EndElement:
			inTitle = false
		}
	}
}

func TestWriteFlamegraphGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFlamegraph(&b, small, "small <test> & co"); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, b.Bytes())
	golden.Check(t, filepath.Join("testdata", "small.svg"), b.Bytes())
}

func TestWriteFlamegraphDeterministic(t *testing.T) {
	s := parseGolden(t)
	var a, b bytes.Buffer
	if err := WriteFlamegraph(&a, s, "lockspin"); err != nil {
		t.Fatal(err)
	}
	if err := WriteFlamegraph(&b, s, "lockspin"); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two flame graphs of one profile differ")
	}
	wellFormed(t, a.Bytes())
}

func TestWriteFlamegraphEscapes(t *testing.T) {
	for _, tt := range []struct{ name, frame string }{
		{"C++ template", "a<b>&c"},
		{"quotes", `operator"" _s('x')`},
		{"control character", "bad\x01name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Stacks{Samples: 1, Stacks: []Stack{{Comm: "c", Count: 1, Frames: []Frame{{Name: tt.frame}}}}}
			var b bytes.Buffer
			if err := WriteFlamegraph(&b, s, tt.frame); err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tt.frame, "\x01", "\uFFFD") + " (1 samples, 100.00%)"
			titles := wellFormed(t, b.Bytes())
			found := false
			for _, ti := range titles {
				found = found || ti == want
			}
			if !found {
				t.Errorf("no frame titled %q among %q", want, titles)
			}
		})
	}
}

func TestWriteFlamegraphEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFlamegraph(&b, &Stacks{}, "nothing"); err != nil {
		t.Fatal(err)
	}
	if titles := wellFormed(t, b.Bytes()); len(titles) != 0 {
		t.Errorf("frames %q in an empty profile's graph", titles)
	}
}
