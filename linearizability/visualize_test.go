package linearizability

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A replay that finds no legal order carries Porcupine's view of it, one
// HTML page (runview links it from the failure it draws).
func TestAFailedReplayHasPorcupinesPage(t *testing.T) {
	b := newBuilder()
	createA(b)
	b.lost(1, 0x1, OpSetData, "/a", func(e *Entry) { e.Data, e.Version = str("v1"), ver(-1) })
	getA(b, 2, 0x2, "v9", 1, 3, 3, false)
	report := CheckAll(b.h, Options{})
	var withPage []Violation
	for _, v := range report.Violations[GuaranteeReads] {
		if v.Failure != nil {
			withPage = append(withPage, v)
		}
	}
	require.NotEmpty(t, withPage, "%v", report.Violations)
	var page strings.Builder
	require.NoError(t, Visualize(withPage[0].Failure, &page))
	require.Contains(t, page.String(), "<html")
}
