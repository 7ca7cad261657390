package linearizability

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// benchHistory is a reference-server history of n operations by 10 clients
// over 20 paths under one parent (all tied together, as in the simulator),
// one write in 16 losing its reply.
func benchHistory(n int) History {
	return referenceHistory(randChooser{rand.New(rand.NewPCG(7, 7))}, 10, n, 20, 16)
}

// BenchmarkCheckAll100k runs every checker on a 100,000-operation history.
//
//	go test -run XXX -bench CheckAll100k -benchtime 3x ./linearizability/
func BenchmarkCheckAll100k(b *testing.B) {
	h := benchHistory(100_000)
	var buf bytes.Buffer
	if err := WriteHistory(&buf, h); err != nil {
		b.Fatal(err)
	}
	unknown := 0
	for i := range h {
		if h[i].OutcomeUnknown() {
			unknown++
		}
	}
	b.ResetTimer()
	for range b.N {
		r := CheckAll(h, Options{})
		if !r.OK() {
			var out bytes.Buffer
			_ = r.Print(&out)
			b.Fatal(out.String())
		}
	}
	b.ReportMetric(float64(len(h)), "entries")
	b.ReportMetric(float64(unknown), "unknown-outcome")
}

// BenchmarkReadHistory100k reads the same history from its file form.
func BenchmarkReadHistory100k(b *testing.B) {
	var buf bytes.Buffer
	if err := WriteHistory(&buf, benchHistory(100_000)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for range b.N {
		if _, err := ReadHistory(bytes.NewReader(buf.Bytes()), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
