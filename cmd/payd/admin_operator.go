package main

import (
	"context"
	"flag"
	"net/url"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Operators of the console (payd serve's /console): add one with a
// one-time setup link, list them, disable one.

// operatorView is an operator as listed: never a hash or secret.
type operatorView struct {
	ID             string  `json:"id"`
	Email          string  `json:"email"`
	Role           string  `json:"role"`
	OrganizationID *string `json:"organization_id"`
	SecondFactor   bool    `json:"second_factor"`
	SetUp          bool    `json:"set_up"`
	LockedUntil    *string `json:"locked_until"`
	DisabledAt     *string `json:"disabled_at"`
	CreatedAt      string  `json:"created_at"`
}

func newOperatorView(o *engine.Operator, now time.Time) operatorView {
	v := operatorView{ID: o.ID, Email: o.Email, Role: o.Role, SecondFactor: len(o.TOTPSecret) > 0, SetUp: o.PasswordHash != "",
		CreatedAt: engine.FormatTime(o.CreatedAt)}
	if o.OrganizationID != "" {
		v.OrganizationID = &o.OrganizationID
	}
	if o.LockedUntil.After(now) {
		s := engine.FormatTime(o.LockedUntil)
		v.LockedUntil = &s
	}
	if o.DisabledAt != nil {
		s := engine.FormatTime(*o.DisabledAt)
		v.DisabledAt = &s
	}
	return v
}

func operatorAdd(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	var p engine.AddOperatorParams
	fs.StringVar(&p.Email, "email", "", "the operator's email, their login")
	fs.StringVar(&p.Role, "role", "", "owner, operator (both may change things) or viewer (sees, changes nothing)")
	fs.StringVar(&p.OrganizationID, "org", "", "the one organization the operator sees")
	fs.BoolVar(&p.Platform, "platform", false, "the operator sees every organization (instead of --org)")
	publicURL := fs.String("public-url", env("PAYD_PUBLIC_URL", "http://127.0.0.1:8080"), "where the console is reached, for the setup link (env PAYD_PUBLIC_URL)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		op, token, err := eng.AddOperator(ctx, p)
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"operator":   newOperatorView(op, eng.Now()),
			"setup_link": strings.TrimRight(*publicURL, "/") + "/console/setup?token=" + url.QueryEscape(token),
			"expires_at": engine.FormatTime(op.SetupExpiresAt),
			"next":       "send the setup link to the operator (it works once); they choose a password and, optionally, a second factor",
		}, nil
	}
}

func operatorList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "only this organization's operators (default all)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		ops, err := eng.ListOperators(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]operatorView, len(ops))
		for i, o := range ops {
			views[i] = newOperatorView(o, eng.Now())
		}
		return map[string]any{"operators": views}, nil
	}
}

func operatorDisable(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	id := fs.String("operator", "", "operator ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		op, err := eng.DisableOperator(ctx, *id)
		if err != nil {
			return nil, err
		}
		return newOperatorView(op, eng.Now()), nil
	}
}
