// Package abi is the ABI check's one home: what a change does to the
// binary interface extensions are compiled against, base against head, in
// one variant's builds (NTS and ZTS lay types out differently). Its part
// of results.json is [Result]; [Judge] is the rule that fails a stable
// branch's target; the verdict block's line is [Result.Cell] and the target's
// "ABI" section [Result.WriteSection].
//
// Three things are compared:
//
//   - the layout of every struct, union, enum and typedef declared in an
//     installed header (those `make install-headers` installs: each
//     PHP_INSTALL_HEADERS of configure.ac and the extensions' config*.m4,
//     a directory meaning its own *.h), read from the builds' DWARF:
//     members added, removed, renamed, re-typed, moved, and size changes.
//     A member whose type changed but kept its size and alignment is a
//     "layout-compatible type change", not a break; so are a new type and
//     a new enumerator. A debug build's DWARF has the types some object
//     file uses; a header probe's ([ProbeHeaders]: the installed headers
//     compiled with -g against a build's configuration, which serves a
//     build made without -g, as NTS is) has every type they declare;
//   - the exported dynamic symbols of the php binary and libphp.so: one
//     removed, or one whose type or (for data) size changed, breaks;
//     a function's size is not compared, since any change to its code
//     moves it;
//   - PHP_API_VERSION, ZEND_MODULE_API_NO and ZEND_EXTENSION_API_NO, from
//     the source trees: a bump is php-src's own statement of a break.
//
// The check needs debug info. gcc documents that -g does not change the
// code it generates, and this holds here: gcc 12 compiling the same file
// with -O2 and with -O2 -g emits byte-identical .text (TestDebugInfo
// KeepsMachineCode checks it on every run), so builds made with -g leave
// the NTS machine code codediff compares unchanged. The cost is size and
// link time: the objects grow about fourfold with .debug_* sections, which
// strip removes from what is installed. A header probe costs no build:
// seconds of gcc a build (on the demo, 264 headers in 9 compiles, 3 to
// 6 s on 2 cores).
//
// On a stable branch (PHP-x.y) a break fails the target unless the mode
// says otherwise ([Mode]: fail, warn, off); on master every change is
// information.
package abi
