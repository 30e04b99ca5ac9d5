package upstream

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"

	"reportdb/jsonv"
)

// Kept reports whether reportdb handles a command itself in front of an
// upstream PuppetDB: a report (stored here only), or a deactivation
// (recorded here, then forwarded, so that both sides agree on the node's
// state). Every other command (replace facts, replace catalog, catalog
// inputs, configure expiration) is the upstream's, forwarded as received.
// PuppetDB accepts a command's name with spaces or underscores, in any
// case.
func Kept(command string) bool {
	n := strings.ToLower(strings.ReplaceAll(command, "_", " "))
	return n == "store report" || n == "deactivate node"
}

// EnvelopeCommand returns the command an envelope-form body names
// ({"command": ..., "version": ..., "payload": ...}; gzip-compressed when
// gz), reading at most limit bytes of it once decompressed. ok is false
// when the body cannot be read that way: the command endpoint then
// answers it with its own error.
func EnvelopeCommand(body []byte, gz bool, limit int64) (command string, ok bool) {
	plain := body
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return "", false
		}
		if plain, err = io.ReadAll(io.LimitReader(zr, limit+1)); err != nil {
			return "", false
		}
	}
	v, err := jsonv.Parse(plain)
	o, isObject := v.(*jsonv.Object)
	if err != nil || !isObject {
		return "", false
	}
	name, _ := o.Get("command")
	command, ok = name.(string)
	return command, ok
}
