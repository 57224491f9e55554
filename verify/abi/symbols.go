package abi

import (
	"debug/elf"
	"fmt"
	"github.com/patchproof/patchproof/internal/safefs"
	"path/filepath"
	"regexp"
)

// A Symbol is a dynamic symbol an ELF file exports.
type Symbol struct {
	Binary string // the file's base name: php, libphp.so
	Name   string
	Type   string // func, object, tls…
	Size   uint64
}

// Key names the symbol in its binary.
func (s Symbol) Key() string { return s.Binary + ": " + s.Name }

// readSymbols adds the symbols file defines and exports to into.
func readSymbols(file string, into map[string]Symbol) error {
	f, err := safefs.OpenELF(file)
	if err != nil {
		return fmt.Errorf("read symbols of %s: %w", file, err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("read symbols of %s: %w", file, err)
	}
	bin := filepath.Base(file)
	for _, s := range syms {
		bind, vis := elf.ST_BIND(s.Info), elf.ST_VISIBILITY(s.Other)
		if s.Section == elf.SHN_UNDEF || (bind != elf.STB_GLOBAL && bind != elf.STB_WEAK) || vis == elf.STV_HIDDEN || vis == elf.STV_INTERNAL {
			continue
		}
		sym := Symbol{Binary: bin, Name: s.Name, Type: symType(elf.ST_TYPE(s.Info)), Size: s.Size}
		into[sym.Key()] = sym
	}
	return nil
}

func symType(t elf.SymType) string {
	switch t {
	case elf.STT_FUNC:
		return "func"
	case elf.STT_OBJECT:
		return "object"
	case elf.STT_TLS:
		return "tls"
	case elf.STT_GNU_IFUNC:
		return "ifunc"
	case elf.STT_NOTYPE:
		return "notype"
	}
	return t.String()
}

// An APINumber is one of the numbers an extension is built against, base's
// and head's.
type APINumber struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line,omitempty"` // head's
	Base string `json:"base"`
	Head string `json:"head"`
}

// apiNumbers are the numbers php-src bumps when its ABI changes, and the
// headers that define them.
var apiNumbers = []struct{ name, file string }{
	{"PHP_API_VERSION", "main/php.h"},
	{"ZEND_MODULE_API_NO", "Zend/zend_modules.h"},
	{"ZEND_EXTENSION_API_NO", "Zend/zend_extensions.h"},
}

// readAPINumber is the value src's header defines name as, and its line.
func readAPINumber(src, name, file string) (string, int, error) {
	b, err := safefs.ReadFile(src, file, maxSourceFile)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", name, err)
	}
	re := regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+` + name + `[ \t]+(\S+)`)
	loc := re.FindSubmatchIndex(b)
	if loc == nil {
		return "", 0, fmt.Errorf("read %s: no #define of it in %s", name, file)
	}
	line := 1
	for _, c := range b[:loc[0]] {
		if c == '\n' {
			line++
		}
	}
	return string(b[loc[2]:loc[3]]), line, nil
}
