package transport

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/transport/signing"
)

var benchBody = []byte(`{"amount":"750.50","payment_method":"bkash_agent","redirect_url":"https://shop.example/return","merchant_id":"order-1002","checkout_mode":"h2h","payer":{"phone":"+8801712345678"},"metadata":{"cart":"A-17","items":[1,2,3]}}`)

// BenchmarkParseObject is the strict decoding of an H2H create body.
func BenchmarkParseObject(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		o, err := parseObject(benchBody)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := o.string("amount", true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifySignature is the H2H signature check of a create.
func BenchmarkVerifySignature(b *testing.B) {
	secret := []byte("payd_ss_0KLRdES1HTSyLGtpBL3geHOGpNPniZLx8OPKNszkjuw")
	now := time.Unix(1763720100, 0)
	ts := signing.Timestamp(now)
	sig := signing.Sign(secret, ts, "POST", "/api/v1/deposits", benchBody)
	b.ReportAllocs()
	for b.Loop() {
		if err := signing.Verify([][]byte{secret}, ts, sig, "POST", "/api/v1/deposits", benchBody, now); err != nil {
			b.Fatal(err)
		}
	}
}

// manyKeysBody is a create whose metadata holds as many short keys as fit
// in a 64 KiB body: duplicate detection must stay linear in their number.
var manyKeysBody = func() []byte {
	var b bytes.Buffer
	b.WriteString(`{"amount":"750.50","payment_method":"bkash_agent","metadata":{`)
	for i := 0; b.Len() < MaxBodyBytes-16; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%x":0`, i)
	}
	b.WriteString(`}}`)
	return b.Bytes()
}()

// BenchmarkParseObjectManyKeys is the strict decoding of a 64 KiB body
// whose nested object has thousands of keys.
func BenchmarkParseObjectManyKeys(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(manyKeysBody)))
	for b.Loop() {
		if _, err := parseObject(manyKeysBody); err != nil {
			b.Fatal(err)
		}
	}
}
