package abi

// Result is the ABI check of a target, its part of results.json: each
// variant's changes, head against base.
type Result struct {
	// Branch is the target's branch, whose name says whether it is
	// stable.
	Branch   string     `json:"branch,omitempty"`
	Variants []*Variant `json:"variants"`
	// Policy is what Judge made of the changes: "fail" or "warn" on a
	// stable branch, "information" on another, "off".
	Policy string `json:"policy,omitempty"`
	// Errors are what kept a variant from being compared.
	Errors []string `json:"errors,omitempty"`
	// Rejected are the variants head's build kept from being compared
	// (ErrHeadRejected): a file beyond the bounds it is read within, or
	// one that crashed the confined reader. Each fails the target under
	// every policy but Off: the change's build made them, and a
	// comparison it prevents must not read as a pass.
	Rejected []string `json:"rejected,omitempty"`
	// NotCompared are the variants the check does not compare, and why.
	NotCompared []NotCompared `json:"not_compared,omitempty"`
}

// NotCompared is a variant the check leaves out, by design rather than
// by an error.
type NotCompared struct {
	Variant string `json:"variant"`
	Why     string `json:"why"`
}

// Variant is one variant's comparison (NTS and ZTS lay types out
// differently).
type Variant struct {
	Name string `json:"name"`
	// Headers are how many installed headers (files, and directories of
	// them) head installs.
	Headers int `json:"installed_headers"`
	// Types and Symbols are how many head has, to say what "unchanged"
	// covers.
	Types   int `json:"types"`
	Symbols int `json:"symbols"`
	// Layouts says where the layouts came from, in words: a debug
	// build's DWARF, or header probes' (ProbeHeaders).
	Layouts string `json:"layouts,omitempty"`
	// ProbeMS is how long the header probes of base and head took, in
	// all.
	ProbeMS int64 `json:"probe_ms,omitempty"`
	// LeftOut are the installed headers a header probe of base or head
	// could not compile: their types are not compared.
	LeftOut []LeftOut `json:"left_out,omitempty"`
	// Warnings are what a reader should weigh with the changes: a type
	// whose DWARF holds or points to itself, or lies deeper than a
	// compiler writes; "?" stands in its layout where the walk stopped.
	Warnings   []string    `json:"warnings,omitempty"`
	APINumbers []APINumber `json:"api_numbers,omitempty"`
	Changes    []Change    `json:"changes,omitempty"`
}

// ChangeKind is what changed, as results.json spells it.
type ChangeKind string

const (
	MemberAdded      ChangeKind = "member added"
	MemberRemoved    ChangeKind = "member removed"
	MemberRenamed    ChangeKind = "member renamed"
	MemberRetyped    ChangeKind = "member re-typed"
	MemberMoved      ChangeKind = "member moved"
	LayoutCompatible ChangeKind = "layout-compatible type change"
	SizeChanged      ChangeKind = "size changed"
	TypeAdded        ChangeKind = "type added"
	TypeRemoved      ChangeKind = "type removed"
	// TypeUnused is a type head's header still declares but nothing
	// head compiles uses, so that its debug info has no layout of it.
	TypeUnused       ChangeKind = "no longer in debug info"
	TypedefRetyped   ChangeKind = "typedef re-typed"
	EnumeratorAdded  ChangeKind = "enumerator added"
	EnumeratorRemove ChangeKind = "enumerator removed"
	EnumeratorValue  ChangeKind = "enumerator value changed"
	SymbolAdded      ChangeKind = "symbol added"
	SymbolRemoved    ChangeKind = "symbol removed"
	SymbolChanged    ChangeKind = "symbol changed"
	APINumberChanged ChangeKind = "API number changed"
)

// A Change is one difference of head's ABI from base's.
type Change struct {
	Kind ChangeKind `json:"kind"`
	// Subject is the type ("struct st_mysqlnd_stats"), the symbol
	// ("libphp.so: php_printf") or the API number.
	Subject string `json:"subject"`
	Member  string `json:"member,omitempty"`
	Base    string `json:"base,omitempty"`
	Head    string `json:"head,omitempty"`
	// File and Line are where head declares it (base, for what head
	// removed).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Break says whether code built against base's headers can be wrong
	// with head's.
	Break bool `json:"break"`
}

// Breaks are the changes of every variant that break the ABI, each with
// its variant's name.
func (r *Result) Breaks() []string {
	var bs []string
	for _, v := range r.Variants {
		for _, c := range v.Changes {
			if c.Break {
				bs = append(bs, v.Name+" "+c.String())
			}
		}
	}
	return bs
}

// String is the change in one line.
func (c Change) String() string {
	s := c.Subject
	if c.Member != "" {
		s += "." + c.Member
	}
	s += ": " + string(c.Kind)
	switch {
	case c.Base != "" && c.Head != "":
		s += " (" + c.Base + " → " + c.Head + ")"
	case c.Base != "":
		s += " (" + c.Base + ")"
	case c.Head != "":
		s += " (" + c.Head + ")"
	}
	return s
}
