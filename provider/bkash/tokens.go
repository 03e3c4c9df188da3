package bkash

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Tokens. bKash blocks a merchant that grants or refreshes too often, so an
// organization's token is granted once and kept on its account row, sealed,
// for every request and every payd instance: the first caller to find it
// due (RenewBefore its expiry) takes a lease on the row (a conditional
// write that one caller wins) and renews it, with the refresh token while
// that is good, else by a grant; the others wait for the row to show the
// new token. A lease whose holder died runs out and another renews. Each
// instance keeps the token in memory too, re-reading the row at most every
// sessionTTL so that a reconnect elsewhere is seen.

// RenewBefore is how long before its expiry a token is renewed.
const RenewBefore = 5 * time.Minute

const (
	renewLease    = 30 * time.Second
	sessionTTL    = 30 * time.Second
	refreshLasts  = 27 * 24 * time.Hour // bKash's refresh tokens last 28 days
	renewWaitStep = 20 * time.Millisecond
	// renewWait bounds how long a caller waits for another's renewal;
	// renewBackoff is how long after a failed renewal the next is tried,
	// so that an outage does not become a flood of grants bKash blocks.
	renewWait    = 5 * time.Second
	renewBackoff = 5 * time.Second
)

// session is an organization's credentials and token in memory.
type session struct {
	creds       credentials
	token       token
	sealedToken []byte
	connectedAt time.Time
	freshUntil  time.Time
	readAt      time.Time
}

func (p *Provider) forget(orgID string) {
	p.mu.Lock()
	delete(p.sessions, orgID)
	p.mu.Unlock()
}

func (p *Provider) renewLock(orgID string) *sync.Mutex {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.renewing[orgID]
	if !ok {
		m = &sync.Mutex{}
		p.renewing[orgID] = m
	}
	return m
}

// session returns an organization's credentials with a token good now:
// ErrNotConnected without credentials, a bKash error when it cannot
// grant one.
func (p *Provider) session(ctx context.Context, orgID string) (*session, error) {
	if err := p.checkStore(); err != nil {
		return nil, err
	}
	now := p.now()
	p.mu.Lock()
	s := p.sessions[orgID]
	p.mu.Unlock()
	if s != nil && now.Before(s.freshUntil) && now.Before(s.readAt.Add(sessionTTL)) {
		return s, nil
	}
	// One caller per instance goes to the row; the others then find its
	// session.
	m := p.renewLock(orgID)
	m.Lock()
	defer m.Unlock()
	p.mu.Lock()
	s = p.sessions[orgID]
	p.mu.Unlock()
	if s != nil && now.Before(s.freshUntil) && now.Before(s.readAt.Add(sessionTTL)) {
		return s, nil
	}
	if p.failedRecently(orgID, now) {
		return nil, errRenewalFailed
	}
	var waited time.Duration
	for {
		a, err := p.store.GetAccount(ctx, orgID)
		if errors.Is(err, engine.ErrNotFound) {
			p.forget(orgID)
			return nil, ErrNotConnected
		} else if err != nil {
			return nil, err
		}
		s, err := p.open(a)
		if err != nil {
			return nil, err
		}
		now = p.now()
		if a.Token != nil && now.Before(a.TokenFreshUntil) {
			p.mu.Lock()
			p.sessions[orgID] = s
			p.mu.Unlock()
			return s, nil
		}
		won, err := p.store.TakeRenewal(ctx, orgID, a.ConnectedAt, now, now.Add(renewLease))
		if err != nil {
			return nil, err
		}
		if won {
			return p.renew(ctx, orgID, s)
		}
		// Another caller renews: until its token comes, the old one serves
		// while bKash still takes it; without one, wait a while.
		if s.token.ID != "" && now.Before(s.token.Expires.Add(-time.Minute)) {
			return s, nil
		}
		if waited += renewWaitStep; waited > renewWait {
			p.renewalFailed(orgID)
			return nil, errRenewalFailed
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(renewWaitStep):
		}
	}
}

// open unseals an account's credentials and token.
func (p *Provider) open(a *Account) (*session, error) {
	raw, err := p.keyring.Open(a.Credentials, sealContext("credentials", a.OrganizationID))
	if err != nil {
		return nil, p.errorf("the organization's credentials cannot be opened with this master key")
	}
	s := &session{connectedAt: a.ConnectedAt, freshUntil: a.TokenFreshUntil, readAt: p.now(), sealedToken: a.Token}
	if err := json.Unmarshal(raw, &s.creds); err != nil {
		return nil, p.errorf("the organization's credentials are unreadable")
	}
	if a.Token != nil {
		raw, err := p.keyring.Open(a.Token, sealContext("token", a.OrganizationID))
		if err == nil {
			err = json.Unmarshal(raw, &s.token)
		}
		if err != nil {
			s.freshUntil = time.Time{} // renewed
		}
	}
	return s, nil
}

// renew gets a new token for the session whose renewal lease this caller
// holds, stores it and ends the lease.
func (p *Provider) renew(ctx context.Context, orgID string, s *session) (*session, error) {
	now := p.now()
	var ans *tokenAnswer
	var err error
	if s.token.Refresh != "" && now.Before(s.token.RefreshBy) {
		ans, err = p.client.refresh(ctx, s.creds, s.token.Refresh)
	}
	if ans == nil || err != nil && !unavailableTransport(err) {
		ans, err = p.client.grant(ctx, s.creds)
	}
	if err == nil && (ans.IDToken == "" || ans.ExpiresIn <= 0) {
		err = &unreachable{reason: "a token answer without a token"}
	}
	if err != nil {
		// The lease ends after a backoff: then the next caller tries.
		p.renewalFailed(orgID)
		if serr := p.store.HoldRenewal(context.WithoutCancel(ctx), orgID, s.connectedAt, p.now().Add(renewBackoff)); serr != nil {
			p.logger.WarnContext(ctx, "bkash: ending a token renewal's lease", "organization_id", orgID, "error", serr)
		}
		return nil, err
	}
	now = p.now()
	t := token{ID: ans.IDToken, Refresh: ans.RefreshToken, Expires: now.Add(time.Duration(ans.ExpiresIn) * time.Second)}
	t.RefreshBy = s.token.RefreshBy
	if t.Refresh != s.token.Refresh || t.RefreshBy.IsZero() {
		t.RefreshBy = now.Add(refreshLasts)
	}
	fresh := t.Expires.Add(-RenewBefore)
	if lifetime := t.Expires.Sub(now); lifetime <= RenewBefore {
		fresh = now.Add(lifetime / 2)
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	sealed := p.keyring.Seal(raw, sealContext("token", orgID))
	if err := p.store.SaveToken(ctx, orgID, s.connectedAt, sealed, fresh); err != nil {
		return nil, err
	}
	ns := &session{creds: s.creds, token: t, sealedToken: sealed, connectedAt: s.connectedAt, freshUntil: fresh, readAt: now}
	p.mu.Lock()
	p.sessions[orgID] = ns
	p.mu.Unlock()
	return ns, nil
}

// errRenewalFailed answers the callers of an instance whose token renewal
// failed within renewBackoff, at once.
var errRenewalFailed = &unreachable{reason: "no token: its renewal failed a moment ago"}

func (p *Provider) renewalFailed(orgID string) {
	p.mu.Lock()
	p.failedUntil[orgID] = p.now().Add(renewBackoff)
	p.mu.Unlock()
}

func (p *Provider) failedRecently(orgID string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return now.Before(p.failedUntil[orgID])
}

// unavailableTransport: bKash was not reached (a grant would not be either).
func unavailableTransport(err error) bool {
	var u *unreachable
	return errors.As(err, &u)
}

// expire marks a token bKash refused as due, if it is still the one on the
// row, so the next call renews it.
func (p *Provider) expire(ctx context.Context, orgID string, s *session) error {
	p.forget(orgID)
	return p.store.ExpireToken(ctx, orgID, s.sealedToken, p.now())
}

// api calls an operation with the organization's token: a token bKash
// refuses (HTTP 401, its 401 means the call was not done) is renewed and
// the call made once more.
func (p *Provider) api(ctx context.Context, orgID string, url func(c credentials) string, body, out any) error {
	return p.apiCall(ctx, orgID, url, body, out, false)
}

// apiV2 is api for the v2 refund operations' envelope.
func (p *Provider) apiV2(ctx context.Context, orgID string, url func(c credentials) string, body, out any) error {
	return p.apiCall(ctx, orgID, url, body, out, true)
}

func (p *Provider) apiCall(ctx context.Context, orgID string, url func(c credentials) string, body, out any, v2 bool) error {
	for try := 0; ; try++ {
		s, err := p.session(ctx, orgID)
		if err != nil {
			return err
		}
		err = p.client.do(ctx, url(s.creds), map[string]string{"Authorization": s.token.ID, "X-App-Key": s.creds.AppKey}, body, out, v2)
		if errors.Is(err, errUnauthorized) && try == 0 {
			if err := p.expire(ctx, orgID, s); err != nil {
				return err
			}
			continue
		}
		return err
	}
}
