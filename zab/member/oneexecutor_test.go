package member

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// carriers are the calls that carry out a Ready (or a piece of one): taking
// it from the Peer, and the storage writes of its contract.
var carriers = map[string]bool{
	"Ready": true, "InstallSnapshot": true, "SetAcceptedEpoch": true, "SetCurrentEpoch": true,
	"CoverEpoch": true, "ClearDamage": true, "WriteSnapshot": true,
}

// allowed are the packages that may make those calls outside tests, with
// why.
var allowed = map[string]string{
	"zab/member":  "the executor",
	"zab/storage": "defines the writes",
	"zab/restore": "a first start's snapshot.0 (restore.Initialize, which Open calls)",
	"zab":         "the core takes its election's Ready",
	"election":    "defines its own Ready",
	// The in-memory cluster keeps each member's disk as data, so that a
	// test can write any history and hold any write; it checks the core's
	// contract, not a shell's.
	"zab/zabtest": "keeps its disks as data",
}

// TestReadyIsCarriedOutOnlyHere: no shell carries out a Ready by itself; zabd
// and the simulator both drive this package.
func TestReadyIsCarriedOutOnlyHere(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var found []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if _, ok := allowed[filepath.ToSlash(rel)]; ok {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		// Only a file that uses the core can take a zab.Peer's Ready (the
		// election has a Ready of its own).
		usesCore := false
		for _, imp := range f.Imports {
			usesCore = usesCore || imp.Path.Value == `"github.com/zabd/zabd/zab"`
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && carriers[sel.Sel.Name] && (usesCore || sel.Sel.Name != "Ready") {
				found = append(found, fset.Position(call.Pos()).String()+": "+sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "a Ready is carried out outside zab/member (zab/member/ready.go has the contract)")
}
