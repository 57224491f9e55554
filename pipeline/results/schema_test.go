package results_test

import (
	"bytes"
	"encoding"
	"encoding/json"
	"os"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/patchproof/patchproof/internal/golden"
	"github.com/patchproof/patchproof/pipeline/results"
	"github.com/patchproof/patchproof/pipeline/results/resultstest"
)

// schemaFile is results.json's JSON Schema, made from the Result type: what
// a reader of results.json may rely on.
const schemaFile = "results.schema.json"

// TestSchemaIsCurrent makes the schema from the types again: a field added
// without -update fails here.
func TestSchemaIsCurrent(t *testing.T) {
	named := map[string]reflect.Type{}
	r := &jsonschema.Reflector{
		// Fields without omitempty are written always, but older files and
		// other writers may lack the newer ones: nothing is required.
		RequiredFromJSONSchemaTags: true,
		// Readers must ignore fields they do not know: new ones are added.
		AllowAdditionalProperties: true,
		// A type that marshals itself as text is a string in the file,
		// whatever its Go fields (bench.Arm is "base-on").
		// (time.Time is one too, which the reflector knows as a date-time.)
		Mapper: func(t reflect.Type) *jsonschema.Schema {
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
