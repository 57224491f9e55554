package abi

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"slices"
)

// ErrTypeGraph is DWARF whose types no compiler writes: a typedef,
// qualifier or array that is its own type through others of them, or a
// chain of them more than maxTypeDepth long. debug/dwarf's Size follows
// such a chain to its end, and on a cycle takes the process down with
// Go's unrecoverable stack overflow.
var ErrTypeGraph = errors.New("DWARF types no compiler writes")

// chainTags are the DIEs whose DW_AT_type debug/dwarf's Size follows: its
// TypedefType, QualType and ArrayType.
var chainTags = map[dwarf.Tag]bool{
	dwarf.TagTypedef:      true,
	dwarf.TagConstType:    true,
	dwarf.TagVolatileType: true,
	dwarf.TagRestrictType: true,
	dwarf.TagArrayType:    true,
}

// checkChains checks the chains of next, each DIE's DW_AT_type by the
// DIE's offset (scanTypes): none is a cycle or longer than maxTypeDepth.
// Each DIE is walked once: its chain's length is kept.
func checkChains(next map[dwarf.Offset]dwarf.Offset) error {
	const onWay = -1
	length := make(map[dwarf.Offset]int, len(next))
	starts := make([]dwarf.Offset, 0, len(next))
	for off := range next {
		starts = append(starts, off)
	}
	// In order, so that the error names the same DIE every time.
	slices.Sort(starts)
	var way []dwarf.Offset
	for _, start := range starts {
		way = way[:0]
		n, end := start, 0
		for {
			if l, done := length[n]; done {
				if l == onWay {
					return fmt.Errorf("type at %#x: %w: a cycle of %d types", start, ErrTypeGraph, len(way)-slices.Index(way, n))
				}
				end = l
				break
			}
			to, ok := next[n]
			if !ok {
				break // a type that names no other: a chain's end
			}
			if len(way) >= maxTypeDepth {
				return fmt.Errorf("type at %#x: %w: a chain of more than %d types", start, ErrTypeGraph, maxTypeDepth)
			}
			length[n] = onWay
			way = append(way, n)
			n = to
		}
		for i := len(way) - 1; i >= 0; i-- {
			end++
			if end > maxTypeDepth {
				return fmt.Errorf("type at %#x: %w: a chain of more than %d types", start, ErrTypeGraph, maxTypeDepth)
			}
			length[way[i]] = end
		}
	}
	return nil
}
