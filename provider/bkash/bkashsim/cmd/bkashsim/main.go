// Command bkashsim serves the bKash simulator (package bkashsim) for trying
// payd against it by hand:
//
//	go run ./provider/bkash/bkashsim/cmd/bkashsim --addr 127.0.0.1:9090
//
// It prints the base URL for payd admin bkash connect --base-url and the
// credentials it accepts. Its payment page has the payer's actions (pay
// from a number, cancel, fail), each sending the browser to payd's
// callback; POST /app/pay (amount, payer) is a payer paying the merchant
// in the bKash app and answers the TrxID that bKash's search then finds.
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/payd-engine/payd/provider/bkash/bkashsim"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "address to listen on")
	flag.Parse()
	sim, err := bkashsim.Listen(*addr)
	if err != nil {
		log.Fatal(err)
	}
	app := bkashsim.App{AppKey: "sim-app-key", AppSecret: "sim-app-secret", Username: "sim-user", Password: "sim-password", ShortCode: "01811111111"}
	sim.AddApp(app)
	fmt.Printf("bKash simulator at %s\n  --base-url %s --app-key %s --app-secret %s --username %s --password %s\n",
		sim.URL, sim.BaseURL(), app.AppKey, app.AppSecret, app.Username, app.Password)
	select {}
}
