package engine

// ReadReportsApart turns reading a page's reports apart
// (sqlgen.ReportsApart) on or off (on by default), so that tests can
// compare the two.
func (e *Engine) ReadReportsApart(on bool) { e.noApart = !on }
