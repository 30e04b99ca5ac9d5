package jsonv

import (
	"strings"
	"testing"
)

// appendStringByByte is AppendString without the eight-byte skip.
func appendStringByByte(dst []byte, s string) []byte { return appendString(dst, s, false) }

func TestPlainASCII8(t *testing.T) {
	for b := 0; b < 256; b++ {
		plain := b >= 0x20 && b < 0x80 && b != '"' && b != '\\'
		for pos := 0; pos < 8; pos++ {
			w := uint64(0x6161616161616161) // "aaaaaaaa"
			w &^= 0xFF << (8 * pos)
			w |= uint64(b) << (8 * pos)
			if got := plainASCII8(w); got != plain {
				t.Fatalf("byte %#x at %d: %v", b, pos, got)
			}
		}
	}
}

// FuzzAppendString: the eight-byte skip changes nothing.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "/etc/nginx/sites-enabled/default.conf", "a\"b\\c\nd\x00e\x7f\x80\xff", "héllo wörld, ünïcode… \u2028", strings.Repeat("x", 33) + "\"" + strings.Repeat("y", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), appendStringByByte(nil, s); string(got) != string(want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	ss := []string{"/etc/nginx/sites-enabled/app0001.conf", "File", "success", "content changed '{md5}2c1f' to '{md5}9a8b'",
		"/Stage[main]/Nginx::Config/File[/etc/nginx/nginx.conf]", "2026-01-15T11:59:59.123Z", "production"}
	for _, c := range []struct {
		name string
		fn   func([]byte, string) []byte
	}{{"bytewise", appendStringByByte}, {"AppendString", AppendString}} {
		b.Run(c.name, func(b *testing.B) {
			var buf []byte
			for i := 0; i < b.N; i++ {
				buf = buf[:0]
				for _, s := range ss {
					buf = c.fn(buf, s)
				}
			}
		})
	}
}
