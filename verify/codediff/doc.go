// Package codediff decides whether two builds compiled a set of C files to the
// same machine code, function by function, and shows what differs.
//
// It owns the relocation-aware comparison of x86-64 ELF relocatable objects
// (the .o files a PHP build leaves next to its sources) and the report that
// comes out of it. It does not build anything and knows nothing of PHP beyond
// the default selection, ext/mysqlnd/*.o.
//
// # What a function is
//
// Every STT_FUNC (and STT_GNU_IFUNC) symbol defined in an object, global or
// static, counts: the .cold, .part.N, .isra.N and .constprop.N pieces gcc
// splits off are functions of their own, and so are functions in .text.*
// sections (-ffunction-sections). A function's bytes run from its symbol's
// value for st_size bytes. Functions are keyed by the object's path relative to
// its side's directory and the symbol name; what exists on one side only is
// listed as added or removed.
//
// # When two functions are identical
//
// Two functions are identical when their code bytes match with every
// reference site masked and their references match pairwise: offset within
// the function, kind and target. References are the relocations the
// assembler left for the linker, plus the PC-relative operands the assembler
// resolved itself because they point into the same section (a call to a
// static function, the address of one) — those are masked too, so a function
// inserted between caller and callee does not mark the caller.
//
// A target is named so that it does not depend on where things sit in the
// object:
//
//   - a named symbol (global, or a local function or object) by its name and
//     the offset into it (the PC-relative bias removed, so "call foo" is "foo");
//   - a section symbol or an assembler label (.LC0) by what lies at the
//     address: in a string section the NUL-terminated literal, quoted; in
//     another mergeable section the constant's bytes; elsewhere the function or
//     object covering the address plus the offset into it; failing that an
//     anonymous block (a jump table, say) by its size and a hash of its bytes
//     and of its own relocations, named the same way.
//
// The address of a PC-relative operand is taken from the decoded instruction:
// a relocation's addend is relative to the end of the 4-byte field, which is
// not the end of the instruction when an immediate follows ("cmpb $0x0,x(%rip)"
// carries x-5), so the bias is the distance from the field to the instruction's
// end, not a fixed 4.
//
// So a literal or a static added elsewhere in the file does not mark unrelated
// functions as changed, while a changed literal marks each function that uses
// it.
//
// # The report
//
// A Report counts the functions compared, identical, changed, added and
// removed, and carries for each changed function a unified diff of its
// disassembly (GNU syntax, 64-bit mode) with each reference shown under the
// instruction it patches, as objdump -dr does, named as above. Undecodable
// bytes show as .byte lines. The diff (Myers) pairs whole instructions with
// their reference lines and ignores addresses, so an inserted instruction
// shows as one added line, not as every later line changed. The Report
// marshals to JSON (its field names are part of results.json) and renders
// Markdown.
//
// # The check
//
// This package is the machine-code check's one home. A Result is a
// target's part of results.json: the NTS Report, which --expect-nts-noop
// makes a verdict, and the ZTS one, information only. Judge applies the
// check's rules to every target's Result; the Result's Cell and
// WriteSection are its column and section of the report, and Information
// the ZTS comparison's.
package codediff
