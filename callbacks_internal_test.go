package payd

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func callbackRoutes() (http.Handler, http.Handler) {
	cb := http.NewServeMux()
	cb.HandleFunc("GET /bkash/callback", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(299) })
	cb.HandleFunc("/hooks/", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(298) })
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	return api, cb
}

// TestCallbackPathsRouteAsBefore: naming the callbacks' paths changes no
// request's route: a callback (its method, a prefix's subtree) reaches the
// provider, anything else payd's routes, with the paths as without.
func TestCallbackPathsRouteAsBefore(t *testing.T) {
	api, cb := callbackRoutes()
	for _, paths := range [][]string{nil, {"/bkash/callback", "/hooks/"}} {
		h := withCallbacks(api, cb, paths)
		for _, c := range []struct {
			method, path string
			want         int
		}{
			{"GET", "/bkash/callback", 299}, {"GET", "/hooks/x/y", 298}, {"POST", "/hooks/", 298},
			{"GET", "/api/v1/deposits/dep_1", 200}, {"GET", "/bkash/callbackx", 200}, {"GET", "/bkash", 200},
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
			if w.Code != c.want {
				t.Errorf("paths %v: %s %s: %d, want %d", paths, c.method, c.path, w.Code, c.want)
			}
		}
	}
}

// BenchmarkCallbacksMiss is what every API request pays to pass the
// provider's callback routes.
func BenchmarkCallbacksMiss(b *testing.B) {
	api, cb := callbackRoutes()
	r := httptest.NewRequest("GET", "/api/v1/deposits/dep_01m7zwmx57akfa85cw0h2p03xg", nil)
	for _, c := range []struct {
		name  string
		paths []string
	}{{"lookup", nil}, {"paths", []string{"/bkash/callback", "/hooks/"}}} {
		b.Run(c.name, func(b *testing.B) {
			h := withCallbacks(api, cb, c.paths)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}
