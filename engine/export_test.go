package engine

// ReadReportsApart turns reading a page's reports apart
// (sqlgen.ReportsApart) on or off (on by default), so that tests can
// compare the two.
func (e *Engine) ReadReportsApart(on bool) { e.noApart = !on }

// SetApartMaxBytes sets the bound of a page held while its reports are
// read apart, and returns a function that restores it.
func SetApartMaxBytes(n int) (restore func()) {
	old := apartMaxBytes
	apartMaxBytes = n
	return func() { apartMaxBytes = old }
}
