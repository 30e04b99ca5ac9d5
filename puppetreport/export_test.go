package puppetreport

// For the tests of the fast path (package puppetreport_test).
var (
	ParseYAMLFast    = parseYAMLFast
	ParseYAMLGeneral = parseYAMLGeneral
	YAMLNodeBound    = yamlNodeBound
	RubyPlainScalar  = rubyPlainScalar
)

var FastYAMLText = fastYAMLText
