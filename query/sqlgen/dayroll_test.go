package sqlgen

import "testing"

func TestDateOnly(t *testing.T) {
	for f, want := range map[string]bool{
		"YYYY-MM-DD": true, "YYYY-MM": true, "Day": true, `FMDD "of" Month`: true, "IYYY-IW": true,
		"YYYY-MM-DD HH24": false, "MI": false, "YYYY-MM-DD\"T\"HH": false, "SSSS": false, "AM": false,
		"Q": true, "": true, `"HH"`: true, "x": false,
	} {
		if got := dateOnly(f); got != want {
			t.Errorf("dateOnly(%q) = %v, want %v", f, got, want)
		}
	}
}
