package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// ManifestFile is the name of the index of recorded scenarios in the
// golden directory.
const ManifestFile = "manifest.json"

// Scenario describes one recorded trace in the manifest.
type Scenario struct {
	Name    string   `json:"name"`
	Desc    string   `json:"desc"`
	Command string   `json:"command"`
	Server  string   `json:"server"`
	JVM     []string `json:"jvmFlags"`
	// Config is the scenario's zoo.cfg without dataDir and clientPort,
	// which are a fresh temporary directory and a free port.
	Config   []string `json:"config"`
	Files    []string `json:"files"`
	Lines    int      `json:"lines"`
	Recorded string   `json:"recorded"`
}

// Setting returns the value of a zoo.cfg key of the scenario.
func (s *Scenario) Setting(key string) (string, bool) {
	for _, line := range s.Config {
		if k, v, ok := strings.Cut(line, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// ReadManifest reads a manifest: scenarios by name.
func ReadManifest(path string) (map[string]Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m := map[string]Scenario{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Sorted returns the manifest's scenarios in name order.
func Sorted(m map[string]Scenario) []Scenario {
	out := make([]Scenario, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
