package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNoArgumentConfig(t *testing.T) {
	cfg, err := loadConfig("")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:2181", cfg.ClientAddr())
	assert.Equal(t, "zabd-data", cfg.DataDir)
	assert.Equal(t, 2*time.Second, cfg.TickTime)
	assert.Equal(t, 4*time.Second, cfg.MinSessionTimeout)
	assert.Equal(t, 40*time.Second, cfg.MaxSessionTimeout)
	assert.False(t, cfg.AdminEnabled, "no admin server on 8080 unless asked for")
	assert.True(t, cfg.ForceSync)
}

func TestConfigFileErrorsNameTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zoo.cfg")
	require.NoError(t, os.WriteFile(path, []byte("dataDir=/tmp/x\ntickTime=soon\n"), 0o644))
	err := run([]string{"-config", path})
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":2: tickTime")
}

// TestEnsembleMyIDErrors: an ensemble member's myid problems stop start-up
// with a message naming the myid file and the key.
func TestEnsembleMyIDErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "zoo.cfg")
	cfg := "dataDir=" + dir + "\nclientPort=0\ntickTime=2000\ninitLimit=5\nsyncLimit=2\n" +
		"server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\nserver.3=127.0.0.1:2890:3890\n"
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))
	myid := filepath.Join(dir, "myid")
	assert.ErrorContains(t, run([]string{"-config", path}), myid+":1: myid: myid file is missing")
	require.NoError(t, os.WriteFile(myid, []byte("4\n"), 0o644))
	assert.ErrorContains(t, run([]string{"-config", path}), myid+":1: myid: id 4 has no server.4 line")
}

func TestBadFlags(t *testing.T) {
	assert.ErrorContains(t, run([]string{"-log-format", "xml"}), "-log-format")
	assert.ErrorContains(t, run([]string{"-log-level", "loud"}), "-log-level")
	assert.ErrorContains(t, run([]string{"extra"}), "unexpected arguments")
}

func TestJSONLogs(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stderr := os.Stderr
	os.Stderr = w
	log, err := newLogger("json", "info")
	os.Stderr = stderr
	require.NoError(t, err)
	log.Info("connection opened", "conn", 1)
	w.Close()
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(string(out))), &line))
	assert.Equal(t, "connection opened", line["msg"])
	assert.Equal(t, 1.0, line["conn"])
}

// TestMemorySettings: the logged settings are the runtime's.
func TestMemorySettings(t *testing.T) {
	t.Setenv("GOGC", "")
	previous := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(previous)
	limit, gogc := memorySettings()
	assert.Equal(t, "none", limit)
	assert.Equal(t, "100", gogc)
	debug.SetMemoryLimit(400 << 20)
	t.Setenv("GOGC", "50")
	limit, gogc = memorySettings()
	assert.Equal(t, "419430400", limit)
	assert.Equal(t, "50", gogc)
}
