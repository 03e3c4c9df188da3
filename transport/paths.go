package transport

import (
	"net/http"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payd-engine/payd/engine"
)

// canonicalPaths answers 404 not_found for a request whose path is not
// canonical ("//", "/./" or "/../" segments, as sent, before any decoding),
// or whose decoded path is not valid UTF-8 or holds a control character:
// no resource of ours is named so, and such bytes in an ID must not reach
// a database (Postgres refuses NUL and invalid UTF-8 in text with an error,
// which would be a 500).
// Left to it, net/http's ServeMux would answer such a path with a 301 to
// the cleaned one: an API client that sent "/v1/deposits/../withdraws/x"
// made a mistake (or is probing), and gets the contract's 404 rather than a
// redirect to another resource. Escaped dots and slashes ("%2E%2E", "%2F")
// stay inside their segment and reach the handlers as part of an ID, which
// is then not found.
func (s *server) canonicalPaths(next http.Handler) http.Handler {
	notFound := s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return engine.Errorf(engine.CodeNotFound, "no such endpoint: the path is not canonical")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && p != canonicalPath(p) || !plainText(r.URL.Path) {
			notFound.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// canonicalPath is p as ServeMux cleans it: rooted, without "." and ".."
// elements or repeated slashes, keeping a trailing slash.
func canonicalPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// plainText reports whether s is valid UTF-8 without control characters.
func plainText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}
