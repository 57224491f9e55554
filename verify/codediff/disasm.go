package codediff

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// inst is one decoded instruction, or one undecodable byte.
type inst struct {
	off int
	len int
	bad bool
	x86asm.Inst
}

// decode sweeps code linearly. gcc keeps jump tables and literals out of
// .text, so a sweep stays in step with the instructions; a byte that does
// not decode is kept as a one-byte bad instruction and the sweep goes on.
// x86asm reports some bytes it cannot decode (a lone prefix, an opcode cut
// short) as an instruction without an opcode rather than as an error.
func decode(code []byte) []inst {
	var out []inst
	for off := 0; off < len(code); {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil || in.Len == 0 || in.Op == 0 {
			out = append(out, inst{off: off, len: 1, bad: true})
			off++
			continue
		}
		out = append(out, inst{off: off, len: in.Len, Inst: in})
		off += in.Len
	}
	return out
}

// pcDisp returns the displacement of a PC-relative operand.
func (in *inst) pcDisp() int64 {
	for _, a := range in.Args {
		switch a := a.(type) {
		case x86asm.Rel:
			return int64(a)
		case x86asm.Mem:
			if a.Base == x86asm.RIP {
				return a.Disp
			}
		}
	}
	return 0
}

// instAt returns the instruction that contains byte off.
func (fn *function) instAt(off int) (inst, bool) {
	i := sort.Search(len(fn.insts), func(i int) bool { return fn.insts[i].off+fn.insts[i].len > off })
	if i == len(fn.insts) || fn.insts[i].off > off || fn.insts[i].bad {
		return inst{}, false
	}
	return fn.insts[i], true
}

// line is one line of a function's listing. Text leaves the address out so
// that an inserted instruction does not make every later line differ.
type line struct {
	off  int
	ref  bool // a reference under the instruction before it
	text string
}

// entry is one instruction's lines: the instruction, then its references.
// Diffs pair whole entries, so a reference never pairs with another
// instruction's.
type entry []line

func (e entry) key() string {
	var b strings.Builder
	for _, l := range e {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// pcBase offsets the addresses handed to the formatter: x86asm prints a
// branch at pc 0 as ".+0x5" and would ask for symbols for small immediates.
const pcBase = 1 << 40

// listing disassembles fn like objdump -dr: each instruction, then one line
// per reference it contains, named by its resolved target. Branches within
// the function show their function-relative target; operands that leave it
// show the target's name.
func (fn *function) listing() []entry {
	var out []entry
	ri := 0
	for _, in := range fn.insts {
		end := in.off + in.len
		var text string
		if in.bad {
			text = fmt.Sprintf(".byte  0x%02x", fn.code[in.off])
		} else {
			text = fn.format(in)
		}
		e := entry{{off: in.off, text: text}}
		for ; ri < len(fn.refs) && fn.refs[ri].off < end; ri++ {
			rf := fn.refs[ri]
			e = append(e, line{off: rf.off, ref: true, text: fmt.Sprintf("%-15s %s", rf.kind, rf.target)})
		}
		out = append(out, e)
	}
	return out
}

func (fn *function) format(in inst) string {
	var pcref *ref
	if in.PCRel > 0 {
		field := in.off + in.PCRelOff
		for i := range fn.refs {
			if fn.refs[i].off == field {
				pcref = &fn.refs[i]
				break
			}
		}
	}
	dest := pcBase + uint64(int64(in.off+in.len)+in.pcDisp())
	sym := func(addr uint64) (string, uint64) {
		if pcref != nil && addr == dest {
			return pcref.target, addr
		}
		if addr >= pcBase && addr <= pcBase+uint64(len(fn.code)) {
			return fmt.Sprintf("%#x", addr-pcBase), addr
		}
		return "", 0
	}
	text := x86asm.GNUSyntax(in.Inst, pcBase+uint64(in.off), sym)
	if op, args, ok := strings.Cut(text, " "); ok {
		return fmt.Sprintf("%-6s %s", op, args)
	}
	return text
}
