package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unitLines returns the values of every key= line of the systemd unit,
// in order.
func unitLines(t *testing.T, unit, key string) []string {
	t.Helper()
	var vals []string
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

// TestSystemdUnit_DataDir checks that the unit and docs/operations.md
// agree on the data dir: the unit sets it as a variable that the env file
// can override (a flag on ExecStart would silently win over
// rappel.env), the variable names serve's flag, and the restore procedure
// writes where DynamicUser= keeps the files.
func TestSystemdUnit_DataDir(t *testing.T) {
	b, err := os.ReadFile("rappel.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, exec := range unitLines(t, unit, "ExecStart") {
		if strings.Contains(exec, "--data-dir") || strings.Contains(exec, "-data-dir") {
			t.Errorf("ExecStart=%s sets the data dir as a flag, which wins over RAPPEL_DATA_DIR in rappel.env; set it with Environment= instead", exec)
		}
	}
	var dataDir string
	for _, env := range unitLines(t, unit, "Environment") {
		name, val, _ := strings.Cut(env, "=")
		if name == envName("data-dir") {
			dataDir = val
		}
		if name == "GOMEMLIMIT" {
			continue
		}
		if NewServeCommand().flagSet().Lookup(flagName(name)) == nil {
			t.Errorf("Environment=%s names no flag of rappel serve", env)
		}
	}
	if dataDir != "%S/rappel" {
		t.Errorf("the unit sets %s=%q, want %%S/rappel, its StateDirectory", envName("data-dir"), dataDir)
	}
	if sd := unitLines(t, unit, "StateDirectory"); len(sd) != 1 || sd[0] != "rappel" {
		t.Errorf("StateDirectory=%v, want rappel (the data dir above)", sd)
	}
	if len(unitLines(t, unit, "DynamicUser")) == 0 {
		t.Fatal("the unit no longer sets DynamicUser=; the restore procedure in docs/operations.md assumes it")
	}

	ops, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, restore, ok := strings.Cut(string(ops), "## Backup and restore")
	if !ok {
		t.Fatal("docs/operations.md has no section Backup and restore")
	}
	restore, _, _ = strings.Cut(restore, "\n## ")
	for _, want := range []string{
		"systemctl stop rappel",
		"mv /var/lib/private/rappel /var/lib/private/rappel.before-restore",
		"rappel restore --from /backups/rappel-2026-11-27.tar --data-dir /var/lib/private/rappel",
		"systemctl start rappel",
	} {
		if !strings.Contains(restore, want) {
			t.Errorf("the restore procedure under systemd lacks %q", want)
		}
	}
}

// TestSystemdUnit_Verify runs systemd-analyze verify over the unit, with
// ExecStart pointed at a binary that exists here, so that a misspelt
// setting or section fails the test rather than the first deployment.
func TestSystemdUnit_Verify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("RAPPEL_CI") != "" {
			t.Fatal("systemd-analyze is missing under RAPPEL_CI: install Debian's systemd package")
		}
		t.Skip("systemd-analyze is not installed (Debian's systemd package); skipping the unit's verification")
	}
	b, err := os.ReadFile("rappel.service")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(b), "/usr/local/bin/rappel", self)
	path := filepath.Join(t.TempDir(), "rappel.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
