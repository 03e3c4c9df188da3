package console

import (
	"context"
	"net/http"
)

// Bkash is what the console does with the bKash API provider: connect an
// organization with the credentials bKash issued it, disconnect it, and
// say where it is connected. The wiring adapts provider/bkash to it, so
// the console imports no provider. A change is audited with the actor of
// ctx (engine.WithActor), the audit naming no credential.
type Bkash interface {
	// BkashConnection returns the API URL the organization is connected
	// to, or "" when it is not.
	BkashConnection(ctx context.Context, orgID string) (baseURL string, err error)
	// ConnectBkash stores the organization's credentials, replacing any;
	// an empty BaseURL is bKash's production API.
	ConnectBkash(ctx context.Context, orgID string, c BkashCredentials) error
	// DisconnectBkash forgets them; false if there were none.
	DisconnectBkash(ctx context.Context, orgID string) (bool, error)
}

// BkashCredentials are what bKash issues a merchant for its API.
type BkashCredentials struct {
	AppKey, AppSecret, Username, Password, BaseURL string
}

// bkashData is the keys page's bKash card: never a credential.
type bkashData struct {
	Connected bool
	BaseURL   string
}

func (s *server) bkashConnect(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" || s.bkash == nil {
		return errNotFound
	}
	c := BkashCredentials{AppKey: r.PostFormValue("app_key"), AppSecret: r.PostFormValue("app_secret"),
		Username: r.PostFormValue("username"), Password: r.PostFormValue("password"), BaseURL: r.PostFormValue("base_url")}
	if err := s.bkash.ConnectBkash(q.ctx(r), q.org, c); err != nil {
		return err
	}
	return done(w, r, q, "/console/keys", "done_bkash_connect")
}

func (s *server) bkashDisconnect(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" || s.bkash == nil {
		return errNotFound
	}
	ok, err := s.bkash.DisconnectBkash(q.ctx(r), q.org)
	if err != nil {
		return err
	}
	if !ok {
		return errNotFound
	}
	return done(w, r, q, "/console/keys", "done_bkash_disconnect")
}
