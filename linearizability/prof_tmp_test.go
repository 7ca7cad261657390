package linearizability

import (
	"os"
	"testing"
	"time"
)

func TestTmpProf(t *testing.T) {
	f, _ := os.Open("/tmp/s33.jsonl")
	h, err := ReadHistory(f, "s")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	vs := CheckWrites(h, Options{})
	t.Log(time.Since(start), len(vs))
	for _, v := range vs {
		t.Log(v.Explanation[:300])
	}
}
