package codediff

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// name returns a reference target's name, which must not depend on where
// unrelated things sit in the object (see the package doc). depth limits how
// far an anonymous block's own relocations are followed.
func (r *objectReader) name(loc location, depth int) string {
	if loc.name != "" {
		return loc.name + fmtOff(loc.off)
	}
	s := r.f.Sections[loc.sec]
	switch {
	case s.Flags&elf.SHF_MERGE != 0 && s.Flags&elf.SHF_STRINGS != 0:
		if lit, ok := r.literal(loc); ok {
			return lit
		}
	case s.Flags&elf.SHF_MERGE != 0 && s.Entsize > 0:
		if c, ok := r.constant(loc); ok {
			return c
		}
	}
	if n, ok := r.covering(loc); ok {
		return n
	}
	if s.Flags&elf.SHF_EXECINSTR != 0 || depth > 0 {
		return s.Name + fmtOff(loc.off)
	}
	return r.anonymous(loc)
}

// fmtOff formats an offset to append to a name: nothing for zero.
func fmtOff(off int64) string {
	switch {
	case off > 0:
		return fmt.Sprintf("+%#x", off)
	case off < 0:
		return fmt.Sprintf("-%#x", -off)
	}
	return ""
}

// literal returns the quoted string at loc in a string section.
func (r *objectReader) literal(loc location) (string, bool) {
	d, err := r.sectionData(loc.sec)
	if err != nil || loc.off < 0 || loc.off >= int64(len(d)) {
		return "", false
	}
	es := int(r.f.Sections[loc.sec].Entsize)
	if es < 1 {
		es = 1
	}
	b := d[loc.off:]
	n := 0
	for ; n+es <= len(b); n += es {
		if isZero(b[n : n+es]) {
			break
		}
	}
	if es == 1 {
		return strconv.Quote(string(b[:n])), true
	}
	return fmt.Sprintf("L%d%q", es, b[:n]), true
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// constant names the entry at loc in a mergeable constant section by its
// bytes, which is what the linker will merge it by.
func (r *objectReader) constant(loc location) (string, bool) {
	d, err := r.sectionData(loc.sec)
	es := int64(r.f.Sections[loc.sec].Entsize)
	if err != nil || loc.off < 0 || loc.off >= int64(len(d)) {
		return "", false
	}
	at := loc.off - loc.off%es
	if at+es > int64(len(d)) {
		return "", false
	}
	return fmt.Sprintf("<const %x>%s", d[at:at+es], fmtOff(loc.off-at)), true
}

// covering names loc after the function or object that contains it; of
// several, the one that starts nearest, and of aliases the smallest name.
func (r *objectReader) covering(loc location) (string, bool) {
	ns := r.named[loc.sec]
	covers := func(n symRef) bool {
		return loc.off == n.value || loc.off >= n.value && loc.off < n.value+n.size
	}
	i := sort.Search(len(ns), func(i int) bool { return ns[i].value > loc.off })
	for i--; i >= 0; i-- {
		if !covers(ns[i]) {
			continue
		}
		best := i
		for j := i - 1; j >= 0 && ns[j].value == ns[i].value; j-- {
			if covers(ns[j]) {
				best = j
			}
		}
		return ns[best].name + fmtOff(loc.off-ns[best].value), true
	}
	return "", false
}

// anonymous names a block of data that no symbol covers — a jump table, an
// aggregate initialiser — by its size and a hash of its bytes and of its own
// relocations. A block runs from the nearest boundary at or before loc to the
// next one; boundaries are symbols and the addresses code refers to.
func (r *objectReader) anonymous(loc location) string {
	s := r.f.Sections[loc.sec]
	b := r.bounds[loc.sec]
	i := sort.Search(len(b), func(i int) bool { return b[i] > loc.off })
	if i == 0 || i == len(b) {
		return s.Name + fmtOff(loc.off)
	}
	start, end := b[i-1], b[i]
	key := location{sec: loc.sec, off: start}
	name, ok := r.anon[key]
	if !ok {
		name = r.hashBlock(loc.sec, start, end)
		r.anon[key] = name
	}
	return name + fmtOff(loc.off-start)
}

func (r *objectReader) hashBlock(sec int, start, end int64) string {
	s := r.f.Sections[sec]
	h := sha256.New()
	var content []byte
	if d, err := r.sectionData(sec); err == nil && end <= int64(len(d)) {
		content = append(content, d[start:end]...)
	}
	var relocs []string
	var lastReloc int64 // end of the last relocation, from start
	for _, e := range r.relocs[sec] {
		if int64(e.off) < start || int64(e.off) >= end {
			continue
		}
		at := int64(e.off) - start
		size := relocSize(e.typ)
		lastReloc = max(lastReloc, at+int64(size))
		if int(at)+size <= len(content) {
			clear(content[at : int(at)+size])
		}
		// A PC-relative entry in a block is relative to the block's
		// start, as gcc's PIC jump tables are: .long .L3-.L4.
		bias := int64(0)
		if pcRelative(e.typ) {
			bias = at
		}
		relocs = append(relocs, fmt.Sprintf("%#x %v %s", at, e.typ, r.name(r.locate(e, bias), 1)))
	}
	// A block ends at the next boundary, which may lie past alignment
	// padding whose size depends on what follows. A block with
	// relocations (a jump table) ends with its last one when only zeros
	// follow; a block without keeps every byte, as a trailing zero may be
	// data.
	if lastReloc > 0 && isZero(content[min(lastReloc, int64(len(content))):]) {
		end = start + lastReloc
		content = content[:min(lastReloc, int64(len(content)))]
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(end-start))
	h.Write(n[:])
	h.Write(content)
	h.Write([]byte(strings.Join(relocs, "\n")))
	return fmt.Sprintf("<%s %d bytes #%s>", s.Name, end-start, hex.EncodeToString(h.Sum(nil)[:4]))
}
