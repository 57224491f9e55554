package results_test

import (
	"bytes"
	"encoding"
	"encoding/json"
	"maps"
	"os"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/internal/side"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
	"github.com/patchproof/patchproof/verify/suites"
	vd "github.com/patchproof/patchproof/verify/verdict"
)

// schemaFile is results.json's JSON Schema, made from the Result type: what
// a reader of results.json may rely on.
const schemaFile = "results.schema.json"

// TestSchemaIsCurrent makes the schema from the types again: a field added
// without -update fails here.
func TestSchemaIsCurrent(t *testing.T) {
	named := map[string]reflect.Type{}
	r := &jsonschema.Reflector{
		// A field without omitempty is always written: required. One with
		// omitempty may be missing.
		RequiredFromJSONSchemaTags: false,
		// Readers must ignore fields they do not know: new ones are added.
		AllowAdditionalProperties: true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			// The closed vocabularies are enums: a reader can switch on
			// them, and a writer's typo fails the schema.
			if e, ok := enums[t]; ok {
				return &jsonschema.Schema{Type: "string", Enum: e}
			}
			// A type that marshals itself as text is a string in the
			// file, whatever its Go fields (bench.Arm is "base-on").
			// (time.Time is one too, which the reflector knows as a
			// date-time.)
			if t.Kind() != reflect.String && t != reflect.TypeFor[time.Time]() && t.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
				return &jsonschema.Schema{Type: "string"}
			}
			return nil
		},
		// Other packages' types are named by their package as well: the
		// benchmark's Result, Settings and Machine are not these. Two
		// types of one name would share a definition: that fails here.
		Namer: func(ty reflect.Type) string {
			name := ty.Name()
			if name == "" {
				return "" // not a definition of its own
			}
			if pkg := path.Base(ty.PkgPath()); pkg != "results" && pkg != "." {
				name = strings.ToUpper(pkg[:1]) + pkg[1:] + name
			}
			if other, ok := named[name]; ok && other != ty {
				t.Errorf("%s and %s are both named %s in the schema", other, ty, name)
			}
			named[name] = ty
			return name
		},
	}
	// The descriptions are the types' and fields' doc comments, read from
	// the packages the types are in (a first pass finds them).
	r.Reflect(&results.Result{})
	addComments(t, r, named)
	s := r.Reflect(&results.Result{})
	s.ID = "https://github.com/patchproof/patchproof/pipeline/results/results.schema.json"
	s.Title = "patchproof results.json"
	s.Description = "What a patchproof run found. schema_version names this format's version."
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	// A nil slice or map is written as null: every array and object may be.
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	nullable(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, schemaFile, append(out, '\n'))
}

// enums are the closed vocabularies of results.json, from the lists their
// packages keep beside the constants.
var enums = map[reflect.Type][]any{
	reflect.TypeFor[results.Status](): anys(vd.Statuses),
	// "" is a measure nothing was compared on.
	reflect.TypeFor[vd.Change]():      append(anys(vd.Changes), ""),
	reflect.TypeFor[suites.Outcome](): anys(suites.Outcomes),
	reflect.TypeFor[side.Side]():      anys(side.Sides[:]),
}

func anys[T any](l []T) []any {
	a := make([]any, len(l))
	for i, v := range l {
		a[i] = v
	}
	return a
}

// addComments gives r the doc comments of the packages of the named types,
// which lie in this module.
func addComments(t *testing.T, r *jsonschema.Reflector, named map[string]reflect.Type) {
	t.Helper()
	const module = "github.com/patchproof/patchproof"
	dirs := map[string]bool{}
	for _, ty := range named {
		if rel, ok := strings.CutPrefix(ty.PkgPath(), module+"/"); ok {
			dirs[rel] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		// The comments' keys are the import path joined with the walked
		// directory, which is relative to this one: ../../verify/bench
		// under this package's path is verify/bench's.
		if err := r.AddGoComments(module+"/pipeline/results", "../../"+d, jsonschema.WithFullComment()); err != nil {
			t.Fatalf("doc comments of %s: %v", d, err)
		}
	}
}

func nullable(v any) {
	switch x := v.(type) {
	case map[string]any:
		if ty, ok := x["type"].(string); ok && (ty == "array" || ty == "object") {
			x["type"] = []any{ty, "null"}
		}
		for _, e := range x {
			nullable(e)
		}
	case []any:
		for _, e := range x {
			nullable(e)
		}
	}
}

// validate checks a results.json against the schema.
func validate(t *testing.T, data []byte) {
	t.Helper()
	c := validator.NewCompiler()
	schema, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(schemaFile, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := validator.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("results.json does not match %s: %v", schemaFile, err)
	}
}

func TestFixturesMatchSchema(t *testing.T) {
	for name, res := range map[string]*results.Result{
		"demo": resultstest.Demo(), "failing": resultstest.Failing(), "racy": resultstest.Racy(), "backport": resultstest.Backport(),
	} {
		t.Run(name, func(t *testing.T) {
			res.SchemaVersion = results.SchemaVersion
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			validate(t, b)
		})
	}
	// A wrong type is caught: the schema is not a tautology.
	var bad bytes.Buffer
	bad.WriteString(`{"schema_version": "one", "exit_code": "zero", "targets": 7}`)
	c := validator.NewCompiler()
	schema, _ := os.ReadFile(schemaFile)
	doc, _ := validator.UnmarshalJSON(bytes.NewReader(schema))
	c.AddResource(schemaFile, doc)
	sch, err := c.Compile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := validator.UnmarshalJSON(&bad)
	if sch.Validate(inst) == nil {
		t.Error("a results.json with wrong types passed the schema")
	}
	// A status outside the vocabulary, and a field that is always
	// written left out, are caught too.
	demo := resultstest.Demo()
	demo.SchemaVersion = results.SchemaVersion
	good, err := json.Marshal(demo)
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string][]byte{
		"unknown status": bytes.Replace(good, []byte(`"status":"passed"`), []byte(`"status":"greenish"`), 1),
		"no stages":      bytes.Replace(good, []byte(`"stages":`), []byte(`"stagez":`), 1),
	} {
		if bytes.Equal(doc, good) {
			t.Fatalf("%s: the fixture has nothing to change", name)
		}
		inst, err := validator.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("%s: passed the schema", name)
		}
	}
}

// TestRealResultMatchesSchema checks the demo's real results.json, which
// scripts/test names in PATCHPROOF_E2E_OUT.
func TestRealResultMatchesSchema(t *testing.T) {
	out := os.Getenv("PATCHPROOF_E2E_OUT")
	if out == "" {
		t.Skip("PATCHPROOF_E2E_OUT is not set: scripts/test runs the demo first")
	}
	b, err := os.ReadFile(out + "/results.json")
	if err != nil {
		t.Fatal(err)
	}
	validate(t, b)
	var v struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.SchemaVersion != results.SchemaVersion {
		t.Errorf("schema_version %d (%v), want %d", v.SchemaVersion, err, results.SchemaVersion)
	}
}
