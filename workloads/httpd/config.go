package httpd

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/patchproof/patchproof/internal/safefs"
)

// confTemplate is the whole of Apache's configuration: nothing from
// /etc/apache2 is read.
var confTemplate = template.Must(template.New("httpd.conf").Funcs(template.FuncMap{"q": quote, "path": filepath.Join}).Parse(`# Written by patchproof; see workloads/httpd.
ServerRoot {{q .Dir}}
ServerName 127.0.0.1
Listen {{.Listen}}
PidFile {{q .PidFile}}
DefaultRuntimeDir {{q .Dir}}
ErrorLog {{q .ErrorLog}}
LogLevel warn

LoadModule mpm_event_module {{q (path .ModulesDir "mod_mpm_event.so")}}
LoadModule authz_core_module {{q (path .ModulesDir "mod_authz_core.so")}}
LoadModule env_module {{q (path .ModulesDir "mod_env.so")}}
LoadModule php_module {{q .Module}}
{{if .SwitchUser}}
User {{.User}}
Group {{.Group}}
{{end}}
# One process of Threads threads: every PHP thread shares one process, as
# under FrankenPHP, so that process-wide mutexes are shared by all of them.
StartServers 1
ServerLimit 1
ThreadLimit {{.Threads}}
ThreadsPerChild {{.Threads}}
MaxRequestWorkers {{.Threads}}
MinSpareThreads 1
MaxSpareThreads {{.MaxSpare}}
MaxConnectionsPerChild 0
KeepAlive {{if .KeepAliveOff}}Off{{else}}On{{end}}
MaxKeepAliveRequests 0
KeepAliveTimeout 60
Timeout 60
{{if .AccessLog}}
LogFormat "%>s %B %D" patchproof
CustomLog {{q .AccessLogPath}} patchproof
{{end}}
PHPIniDir {{q .Dir}}
DocumentRoot {{q .DocRoot}}
{{range .Env}}SetEnv {{.Name}} {{q .Value}}
{{end}}
<Directory />
	AllowOverride None
	Require all denied
</Directory>
<Directory {{q .DocRoot}}>
	Require all granted
	# Authorization reaches PHP's $_SERVER, as under FrankenPHP or FPM.
	CGIPassAuth On
</Directory>
<FilesMatch "\.php$">
	SetHandler application/x-httpd-php
</FilesMatch>
`))

// quote makes s one Apache configuration argument.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

type envVar struct{ Name, Value string }

type confData struct {
	Options
	Port                                      int
	Listen                                    string
	PidFile, ErrorLog, DocRoot, AccessLogPath string
	SwitchUser                                bool
	MaxSpare                                  int
	Env                                       []envVar
}

// Paths inside the run dir.
const (
	confName      = "httpd.conf"
	iniName       = "php.ini"
	pidName       = "httpd.pid"
	errorLogName  = "error.log"
	accessLogName = "access.log"
	outName       = "apache.out"
	docRootName   = "docroot"
)

// LogNames are the names of the files in which a server says what went
// wrong: Apache's error log (PHP's errors too) and its own output.
func LogNames() []string { return []string{errorLogName, outName} }

func (s *Server) confData() confData {
	d := confData{
		Options:       s.opt,
		Port:          s.Port,
		Listen:        s.opt.Placement.listen(s.Port),
		PidFile:       filepath.Join(s.Dir, pidName),
		ErrorLog:      s.ErrorLog,
		DocRoot:       s.DocRoot,
		AccessLogPath: s.AccessLog,
		SwitchUser:    os.Geteuid() == 0,
		// Idle threads can never exceed Threads, so Apache never retires
		// the one child for having too many.
		MaxSpare: s.opt.Threads + 1,
	}
	for _, k := range slices.Sorted(maps.Keys(s.opt.Env)) {
		d.Env = append(d.Env, envVar{k, s.opt.Env[k]})
	}
	return d
}

func (s *Server) writeConfig() error {
	var b bytes.Buffer
	if err := confTemplate.Execute(&b, s.confData()); err != nil {
		return err
	}
	return safefs.WriteFile(s.Dir, confName, b.Bytes(), 0o644)
}

// iniText is php.ini: errors to Apache's error log, never into a response
// (a benchmark must not measure a warning's text), OPcache where the
// build has one (opcache, "" for none; its lock file in dir), then
// Options.INI, which may override any of it.
func iniText(ini map[string]string, opcache, dir string) []byte {
	var b bytes.Buffer
	b.WriteString("; Written by patchproof; see workloads/httpd.\ndisplay_errors = Off\nlog_errors = On\n")
	if opcache != "" {
		b.WriteString(opcacheLines(opcache, dir))
	}
	for _, k := range slices.Sorted(maps.Keys(ini)) {
		fmt.Fprintf(&b, "%s = %s\n", k, ini[k])
	}
	return b.Bytes()
}

// writeFiles writes php.ini and the document root.
func (s *Server) writeFiles() error {
	if err := safefs.WriteFile(s.Dir, iniName, iniText(s.opt.INI, s.opcache, s.Dir), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(s.DocRoot, 0o755); err != nil {
		return err
	}
	for name, content := range s.opt.Files {
		p := filepath.Join(s.DocRoot, filepath.FromSlash(name))
		if !strings.HasPrefix(p, s.DocRoot+string(filepath.Separator)) {
			return fmt.Errorf("file %q: outside the document root", name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := safefs.WriteIn(s.Dir, p, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
