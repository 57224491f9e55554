// Package ghactions escapes what patchproof writes into GitHub Actions'
// workflow commands (::error::, ::warning::, ::notice::). Unescaped, a
// newline in a message ends the command and can start another, and some
// messages and file names come from the tree under test.
package ghactions

import "strings"

var (
	message  = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	property = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// Message escapes a command's message: %, CR and LF.
func Message(s string) string { return message.Replace(s) }

// Property escapes a property's value (file=, line=): a message's
// escapes, and the ':' and ',' that end a value.
func Property(s string) string { return property.Replace(s) }
