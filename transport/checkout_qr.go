package transport

import (
	"fmt"
	"html/template"
	"strings"

	"rsc.io/qr"
)

// qrQuietZone is the blank margin, in modules, that scanners need around
// a QR code.
const qrQuietZone = 4

// qrSVG renders payload as a QR code in an inline SVG (error correction
// level M), drawn server-side so the page needs no script and no image
// source in its CSP. Each row's runs of dark modules become one path
// segment, which keeps the markup small.
func qrSVG(payload string) (template.HTML, error) {
	code, err := qr.Encode(payload, qr.M)
	if err != nil {
		return "", err
	}
	n := code.Size + 2*qrQuietZone
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" shape-rendering="crispEdges" role="img" aria-label="QR code">`, n, n, n*6, n*6)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y := 0; y < code.Size; y++ {
		for x := 0; x < code.Size; {
			if !code.Black(x, y) {
				x++
				continue
			}
			run := 1
			for x+run < code.Size && code.Black(x+run, y) {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x+qrQuietZone, y+qrQuietZone, run, run)
			x += run
		}
	}
	b.WriteString(`"/></svg>`)
	// The markup is built from numbers only: nothing of payload reaches it.
	return template.HTML(b.String()), nil
}

// QRSVG is payload as a QR code in an inline SVG, as the checkout draws
// its own: for the console's setup codes and payment links.
func QRSVG(payload string) (template.HTML, error) { return qrSVG(payload) }
