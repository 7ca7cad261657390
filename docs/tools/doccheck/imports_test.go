package doccheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/zabd/zabd/"

var root = filepath.Join("..", "..", "..")

// listImports asks go list for every package's imports of this module's
// packages (test files excluded).
func listImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	got := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		require.NoError(t, dec.Decode(&p))
		var own []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		slices.Sort(own)
		got[strings.TrimPrefix(p.ImportPath, module)] = own
	}
	return got
}

// TestArchitectureImportTable: every row of the table in
// docs/architecture.md names packages whose imports of zabd packages are
// exactly the row's, and every package with such imports has a row.
func TestArchitectureImportTable(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	// The table starts at its "| Package | Imports |" header and ends at
	// the first line that is not a table row.
	_, table, found := strings.Cut(string(doc), "\n| Package | Imports |\n")
	require.True(t, found, "no import table found")
	table, _, _ = strings.Cut(table, "\n\n")
	row := regexp.MustCompile("(?m)^\\| ((?:`[^`]+`(?:, )?)+) \\| (.*) \\|$")
	quoted := regexp.MustCompile("`([^`]+)`")
	documented := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		var imports []string
		for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
			imports = append(imports, q[1])
		}
		slices.Sort(imports)
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			documented[q[1]] = imports
		}
	}
	require.NotEmpty(t, documented, "no import table found")
	actual := listImports(t)
	for pkg, imports := range documented {
		got, ok := actual[pkg]
		if assert.True(t, ok, "%s is in the table but not a package", pkg) {
			assert.Equal(t, got, imports, "imports of %s", pkg)
		}
	}
	for pkg := range actual {
		if strings.HasPrefix(pkg, "docs/tools/doccheck") {
			continue
		}
		_, ok := documented[pkg]
		assert.True(t, ok, "package %s has no row in the table", pkg)
	}
}
