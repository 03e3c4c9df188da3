package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"time"
)

// Operators are the people who run payd from the operator console: an
// organization's operators see and act on that organization only; platform
// operators (no organization) on all of them. The engine keeps their
// accounts, lockouts and sessions; the console hashes passwords (argon2id)
// and checks second factors, which need what the engine must not import.

// Prefixes of operator and session IDs.
const (
	PrefixOperator        = "op_"
	PrefixOperatorSession = "ses_"
)

// Operator roles: an owner may do everything, an operator the day's work
// but no credential or balance chain, a viewer only looks. The console's
// route table says which role each page and action needs.
const (
	RoleOwner    = "owner"
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// Audit actions of operator accounts and sessions.
const (
	AuditOperatorAdd     = "operator.add"
	AuditOperatorSetup   = "operator.setup"
	AuditOperatorDisable = "operator.disable"
	AuditOperatorLocked  = "operator.locked"
	AuditOperatorLogin   = "operator.login"
	AuditOperatorLogout  = "operator.logout"
)

// Operator account limits.
const (
	// OperatorSetupTTL is how long a setup link works.
	OperatorSetupTTL = 72 * time.Hour
	// MaxLoginFailures wrong logins in a row lock an account for
	// LoginLockout.
	MaxLoginFailures = 5
	LoginLockout     = 15 * time.Minute
	// SessionIdleTimeout ends a session not used for that long;
	// SessionAbsoluteTimeout ends every session that old.
	SessionIdleTimeout     = 30 * time.Minute
	SessionAbsoluteTimeout = 12 * time.Hour
	// sessionTouchEvery bounds how often a session's last use is written.
	sessionTouchEvery = time.Minute
)

// Operator is a person who may log in to the operator console.
type Operator struct {
	ID    string
	Email string
	Role  string
	// OrganizationID is the one organization the operator sees; "" for a
	// platform operator, who sees all.
	OrganizationID string
	// PasswordHash is the console's encoding of the password hash
	// (argon2id); "" until the operator completes the setup.
	PasswordHash string
	// TOTPSecret is the second factor's secret, sealed under the master
	// key; nil without a second factor. LastTOTPStep is the time step of
	// the last code accepted, which is never accepted again.
	TOTPSecret   []byte
	LastTOTPStep int64
	// SetupTokenHash is the SHA-256 of the one-time setup link's token,
	// nil once used; SetupExpiresAt is when the link stops working.
	SetupTokenHash []byte
	SetupExpiresAt time.Time
	// FailedLogins counts wrong logins since the last good one;
	// LockedUntil is when a lockout ends (zero: none).
	FailedLogins int
	LockedUntil  time.Time
	DisabledAt   *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Platform reports whether the operator sees every organization.
func (o *Operator) Platform() bool { return o.OrganizationID == "" }

// Sees reports whether the operator may see orgID's resources.
func (o *Operator) Sees(orgID string) bool { return o.Platform() || o.OrganizationID == orgID }

// OperatorSession is a logged-in browser. The cookie holds its token; the
// store keeps only the token's SHA-256.
type OperatorSession struct {
	ID         string
	TokenHash  []byte
	OperatorID string
	CreatedAt  time.Time
	LastSeenAt time.Time
	// ExpiresAt is the absolute end, CreatedAt + SessionAbsoluteTimeout.
	ExpiresAt time.Time
	RevokedAt *time.Time
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// ErrLoginRefused is every refused login and unknown or ended session:
// which check failed is not told to whoever tries.
var ErrLoginRefused error = Errorf(CodeUnauthorized, "wrong email, password or code, or the account is locked")

// AddOperatorParams describe a new operator. Exactly one of OrganizationID
// and Platform is given.
type AddOperatorParams struct {
	Email          string
	Role           string
	OrganizationID string
	Platform       bool
}

// NormalizeEmail trims and lower-cases an email, and checks its shape.
func NormalizeEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	at := strings.IndexByte(s, '@')
	if len(s) > 254 || at < 1 || at == len(s)-1 || strings.ContainsAny(s, " \t\r\n<>\"'") || checkText("email", s) != nil {
		return "", Invalid("email", "must be an email address")
	}
	return s, nil
}

// AddOperator creates an operator without a password and returns it with
// the one-time token of its setup link (valid OperatorSetupTTL), which is
// stored only as a hash.
func (e *Engine) AddOperator(ctx context.Context, p AddOperatorParams) (*Operator, string, error) {
	email, err := NormalizeEmail(p.Email)
	if err != nil {
		return nil, "", err
	}
	switch p.Role {
	case RoleOwner, RoleOperator, RoleViewer:
	default:
		return nil, "", Invalid("role", "must be owner, operator or viewer")
	}
	if p.Platform == (p.OrganizationID != "") {
		return nil, "", Invalid("organization", "give an organization or platform, not both or neither")
	}
	now := e.now()
	token := RandomToken(24)
	op := &Operator{
		ID: NewID(PrefixOperator, now), Email: email, Role: p.Role, OrganizationID: p.OrganizationID,
		SetupTokenHash: hashToken(token), SetupExpiresAt: now.Add(OperatorSetupTTL), CreatedAt: now, UpdatedAt: now,
	}
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if op.OrganizationID != "" {
			if _, err := tx.GetOrganization(ctx, op.OrganizationID); err != nil {
				return notFound(err, "organization")
			}
		}
		if err := tx.Console().CreateOperator(ctx, op); err != nil {
			if errors.Is(err, ErrDuplicate) {
				return Errorf(CodeConflict, "email: an operator with %s exists", email)
			}
			return err
		}
		return e.audit(ctx, tx, AuditOperatorAdd, op.OrganizationID, op.ID, map[string]string{"email": email, "role": op.Role})
	})
	if err != nil {
		return nil, "", err
	}
	return op, token, nil
}

// ListOperators returns the operators of an organization, or every
// operator if orgID is "", oldest first.
func (e *Engine) ListOperators(ctx context.Context, orgID string) ([]*Operator, error) {
	var out []*Operator
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.Console().ListOperators(ctx, orgID)
		return err
	})
	return out, err
}

// DisableOperator stops an operator from logging in and ends its sessions.
func (e *Engine) DisableOperator(ctx context.Context, id string) (*Operator, error) {
	var op *Operator
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if op, err = tx.Console().GetOperator(ctx, id); err != nil {
			return notFound(err, "operator")
		}
		if op.DisabledAt != nil {
			return nil
		}
		now := e.now()
		op.DisabledAt, op.UpdatedAt = &now, now
		if err := tx.Console().UpdateOperator(ctx, op); err != nil {
			return err
		}
		if err := tx.Console().RevokeOperatorSessions(ctx, op.ID, now); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditOperatorDisable, op.OrganizationID, op.ID, map[string]string{"email": op.Email})
	})
	return op, err
}

// OperatorBySetupToken returns the operator a setup link is for, or
// not_found if the link is unknown, used, expired or its operator disabled.
func (e *Engine) OperatorBySetupToken(ctx context.Context, token string) (*Operator, error) {
	var op *Operator
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		op, err = e.setupOperator(ctx, tx, token)
		return err
	})
	return op, err
}

func (e *Engine) setupOperator(ctx context.Context, tx Tx, token string) (*Operator, error) {
	if token == "" {
		return nil, Errorf(CodeNotFound, "setup link not found or expired")
	}
	op, err := tx.Console().GetOperatorBySetupTokenHash(ctx, hashToken(token))
	if err == nil && (op.DisabledAt != nil || !e.now().Before(op.SetupExpiresAt)) {
		err = ErrNotFound
	}
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(CodeNotFound, "setup link not found or expired")
	}
	return op, err
}

// CompleteSetupParams set an operator's password (and second factor)
// through its setup link.
type CompleteSetupParams struct {
	Token        string
	PasswordHash string
	// TOTPSecret, when set, turns on the second factor; TOTPStep is the
	// step of the code that proved the operator holds it.
	TOTPSecret []byte
	TOTPStep   int64
}

// CompleteOperatorSetup sets the password of the operator of a setup link
// and uses the link up.
func (e *Engine) CompleteOperatorSetup(ctx context.Context, p CompleteSetupParams) (*Operator, error) {
	if p.PasswordHash == "" {
		return nil, Invalid("password", "is required")
	}
	var op *Operator
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if op, err = e.setupOperator(ctx, tx, p.Token); err != nil {
			return err
		}
		now := e.now()
		op.PasswordHash, op.SetupTokenHash, op.SetupExpiresAt, op.UpdatedAt = p.PasswordHash, nil, time.Time{}, now
		op.TOTPSecret, op.LastTOTPStep = nil, 0
		if len(p.TOTPSecret) > 0 {
			op.TOTPSecret, op.LastTOTPStep = e.keyring.Seal(p.TOTPSecret, "operator_totp:"+op.ID), p.TOTPStep
		}
		if err := tx.Console().UpdateOperator(ctx, op); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditOperatorSetup, op.OrganizationID, op.ID,
			map[string]string{"email": op.Email, "second_factor": boolText(len(p.TOTPSecret) > 0)})
	})
	return op, err
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// OperatorTOTPSecret opens an operator's second-factor secret; nil if it
// has none.
func (e *Engine) OperatorTOTPSecret(op *Operator) ([]byte, error) {
	if len(op.TOTPSecret) == 0 {
		return nil, nil
	}
	return e.keyring.Open(op.TOTPSecret, "operator_totp:"+op.ID)
}

// OperatorForLogin returns the operator who may try to log in as email, or
// ErrLoginRefused if there is none, it is disabled, has not completed its
// setup, or is locked out.
func (e *Engine) OperatorForLogin(ctx context.Context, email string) (*Operator, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, ErrLoginRefused
	}
	var op *Operator
	err = e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		op, err = tx.Console().GetOperatorByEmail(ctx, email)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, ErrLoginRefused
	}
	if err != nil {
		return nil, err
	}
	if !e.canLogIn(op) {
		return nil, ErrLoginRefused
	}
	return op, nil
}

func (e *Engine) canLogIn(op *Operator) bool {
	return op.DisabledAt == nil && op.PasswordHash != "" && !e.now().Before(op.LockedUntil)
}

// RecordLoginFailure counts a wrong login of an operator; the
// MaxLoginFailures-th in a row locks the account for LoginLockout.
func (e *Engine) RecordLoginFailure(ctx context.Context, operatorID string) error {
	return e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		op, err := tx.Console().LockOperator(ctx, operatorID)
		if err != nil {
			return notFound(err, "operator")
		}
		now := e.now()
		op.FailedLogins++
		op.UpdatedAt = now
		locked := op.FailedLogins >= MaxLoginFailures
		if locked {
			op.FailedLogins, op.LockedUntil = 0, now.Add(LoginLockout)
		}
		if err := tx.Console().UpdateOperator(ctx, op); err != nil {
			return err
		}
		if locked {
			return e.audit(ctx, tx, AuditOperatorLocked, op.OrganizationID, op.ID,
				map[string]string{"email": op.Email, "until": FormatTime(op.LockedUntil)})
		}
		return nil
	})
}

// StartSessionParams log an operator in whose password (and code) the
// console checked.
type StartSessionParams struct {
	OperatorID string
	// TOTPStep is the time step of the code given; it must be later than
	// the last one accepted (a code is good once). Zero without a second
	// factor.
	TOTPStep int64
	// ReplacesToken is the token of a session the browser already had,
	// which ends: a login always starts a new session (no fixation).
	ReplacesToken string
}

// StartOperatorSession starts a session for an operator and returns it with
// its token, which only the cookie keeps; it resets the failed logins.
func (e *Engine) StartOperatorSession(ctx context.Context, p StartSessionParams) (*OperatorSession, string, error) {
	token := RandomToken(32)
	var s *OperatorSession
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		op, err := tx.Console().LockOperator(ctx, p.OperatorID)
		if err != nil {
			return notFound(err, "operator")
		}
		if !e.canLogIn(op) {
			return ErrLoginRefused
		}
		if len(op.TOTPSecret) > 0 {
			if p.TOTPStep <= op.LastTOTPStep {
				return ErrLoginRefused // the code was used already
			}
			op.LastTOTPStep = p.TOTPStep
		}
		now := e.now()
		op.FailedLogins, op.LockedUntil, op.UpdatedAt = 0, time.Time{}, now
		if err := tx.Console().UpdateOperator(ctx, op); err != nil {
			return err
		}
		if p.ReplacesToken != "" {
			if err := e.endSession(ctx, tx, p.ReplacesToken, now); err != nil {
				return err
			}
		}
		s = &OperatorSession{
			ID: NewID(PrefixOperatorSession, now), TokenHash: hashToken(token), OperatorID: op.ID,
			CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionAbsoluteTimeout),
		}
		if err := tx.Console().CreateOperatorSession(ctx, s); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditOperatorLogin, op.OrganizationID, op.ID, map[string]string{"session": s.ID})
	})
	if err != nil {
		return nil, "", err
	}
	return s, token, nil
}

// endSession revokes the session of token, if there is one still open.
func (e *Engine) endSession(ctx context.Context, tx Tx, token string, now time.Time) error {
	s, err := tx.Console().GetOperatorSessionByHash(ctx, hashToken(token))
	if errors.Is(err, ErrNotFound) || (err == nil && s.RevokedAt != nil) {
		return nil
	}
	if err != nil {
		return err
	}
	s.RevokedAt = &now
	return tx.Console().UpdateOperatorSession(ctx, s)
}

// OperatorSession returns the session of a cookie's token and its
// operator, or ErrLoginRefused if the token is unknown, the session was
// revoked, idle longer than SessionIdleTimeout or older than
// SessionAbsoluteTimeout, or its operator is disabled. It records the use.
func (e *Engine) OperatorSession(ctx context.Context, token string) (*OperatorSession, *Operator, error) {
	if token == "" || len(token) > 128 {
		return nil, nil, ErrLoginRefused
	}
	var s *OperatorSession
	var op *Operator
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if s, err = tx.Console().GetOperatorSessionByHash(ctx, hashToken(token)); err != nil {
			return err
		}
		op, err = tx.Console().GetOperator(ctx, s.OperatorID)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, nil, ErrLoginRefused
	}
	if err != nil {
		return nil, nil, err
	}
	now := e.now()
	if s.RevokedAt != nil || !now.Before(s.ExpiresAt) || now.Sub(s.LastSeenAt) >= SessionIdleTimeout || op.DisabledAt != nil {
		return nil, nil, ErrLoginRefused
	}
	if now.Sub(s.LastSeenAt) >= sessionTouchEvery {
		err := e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
			cur, err := tx.Console().GetOperatorSessionByHash(ctx, s.TokenHash)
			if err != nil || cur.RevokedAt != nil {
				return ErrLoginRefused
			}
			cur.LastSeenAt = now
			return tx.Console().UpdateOperatorSession(ctx, cur)
		})
		if err != nil {
			return nil, nil, err
		}
		s.LastSeenAt = now
	}
	return s, op, nil
}

// EndOperatorSession logs out: the session of token stops working.
func (e *Engine) EndOperatorSession(ctx context.Context, token string) error {
	return e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		s, err := tx.Console().GetOperatorSessionByHash(ctx, hashToken(token))
		if errors.Is(err, ErrNotFound) || (err == nil && s.RevokedAt != nil) {
			return nil
		}
		if err != nil {
			return err
		}
		op, err := tx.Console().GetOperator(ctx, s.OperatorID)
		if err != nil {
			return err
		}
		now := e.now()
		s.RevokedAt = &now
		if err := tx.Console().UpdateOperatorSession(ctx, s); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditOperatorLogout, op.OrganizationID, op.ID, map[string]string{"session": s.ID})
	})
}
