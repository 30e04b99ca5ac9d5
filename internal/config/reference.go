package config

import (
	"bytes"
	"fmt"
	"strings"
)

// Reference is docs/configuration.md: every setting with its flag,
// environment variable, default and meaning, made from Settings so that
// the page cannot say something the code does not do
// (`go test ./internal/config -run Reference -update` writes it).
func Reference() []byte {
	var b bytes.Buffer
	b.WriteString(`<!-- Generated from internal/config (Settings): go test ./internal/config -run Reference -update -->
# Configuration reference

Every setting of ` + "`reportdb serve`" + ` has one name, used as the command-line flag
(` + "`--name`" + `), as the key of the YAML configuration file (` + "`--config FILE`" + `, see
[deploy/reportdb.yaml](../deploy/reportdb.yaml)) and, upper-cased with ` + "`REPORTDB_`" + ` in front, as the
environment variable. Precedence, lowest first: the defaults below, the configuration file,
the environment, the flags. Unknown keys in the file are errors.

Durations take Go's units plus days (` + "`90s`, `36h`, `14d`" + `); sizes are in bytes.
` + "`reportdb serve --print-config`" + ` prints the effective configuration as YAML (a file
` + "`--config`" + ` accepts, the database password masked, each value commented with where it
came from) and exits.

| flag | environment | default | meaning |
|---|---|---|---|
| ` + "`--config FILE`" + ` | ` + "`REPORTDB_CONFIG`" + ` | | YAML configuration file, keys as the flag names |
`)
	defaults := Defaults()
	for _, s := range Settings {
		arg, help := argName(s.Help)
		flag := "--" + s.Key
		if arg != "" {
			flag += " " + arg
		}
		def := s.Format(defaults)
		switch {
		case def == "":
			def = "(none)"
		default:
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", flag, s.Env(), def, strings.ReplaceAll(help, "|", `\|`))
	}
	return b.Bytes()
}

// argName takes the flag package's convention: the first back-quoted word
// of a help text names the flag's argument; the quotes are dropped from
// the text.
func argName(help string) (arg, text string) {
	i := strings.IndexByte(help, '`')
	if i < 0 {
		return "", help
	}
	j := strings.IndexByte(help[i+1:], '`')
	if j < 0 {
		return "", help
	}
	arg = help[i+1 : i+1+j]
	return arg, help[:i] + arg + help[i+1+j+1:]
}
