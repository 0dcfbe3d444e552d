package jsonx

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// wantNativeEnv, set by TestOtherArchitectures for the test binaries it
// runs, says whether sonic's native code must run there.
const wantNativeEnv = "RAPPEL_JSONX_WANT_NATIVE"

// TestNative checks that sonic's native code runs where it should: on
// amd64 with a Go sonic supports (this machine, and so the figures of
// BENCHMARKS.md), and as TestOtherArchitectures says on other architectures.
func TestNative(t *testing.T) {
	want, ok := false, false
	if v := os.Getenv(wantNativeEnv); v != "" {
		want, ok = v == "1", true
	} else if minor, err := goMinor(); err == nil && runtime.GOARCH == "amd64" {
		want, ok = minor < 28, true
	}
	if !ok {
		t.Skipf("no expectation for %s/%s %s", runtime.GOOS, runtime.GOARCH, runtime.Version())
	}
	if Native() != want {
		t.Fatalf("Native() = %v on %s %s, want %v", Native(), runtime.GOARCH, runtime.Version(), want)
	}
}

// goMinor is the minor version of the Go that built the test: 26 for
// go1.26.8.
func goMinor() (int, error) {
	v, _ := strings.CutPrefix(runtime.Version(), "go1.")
	v, _, _ = strings.Cut(v, ".")
	return strconv.Atoi(v)
}

// TestOtherArchitectures builds jsonx (all its callers need) for
// arm64, where sonic runs its own arm64 code; riscv64, where sonic's build
// constraints select its encoding/json fallback; and 386, where sonic does
// not compile and jsonx leaves it out. It then runs this package's tests
// built for each, with Native checked, where the machine can: 386 on an
// amd64 host, the others under qemu-user (qemu-aarch64, qemu-riscv64) when
// it is installed.
func TestOtherArchitectures(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds for three architectures; skipped under -short")
	}
	root := filepath.Join("..", "..")
	tests := "^(TestNative|TestUnmarshal|TestUnmarshalStrict|TestStdDecode|TestMarshal|FuzzUnmarshal|FuzzMarshal)$"
	for _, arch := range []struct {
		goarch, runner string
		native         bool
	}{
		{"arm64", "qemu-aarch64", true},
		{"riscv64", "qemu-riscv64", false},
		{"386", "", false},
	} {
		t.Run(arch.goarch, func(t *testing.T) {
			env := append(os.Environ(), "GOOS=linux", "GOARCH="+arch.goarch, "CGO_ENABLED=0")
			// Its callers (kv, plugins, bundle) hold no code of their own per
			// architecture: that jsonx builds for one is what they need.
			run(t, root, env, "go", "vet", "./internal/jsonx")
			bin := filepath.Join(t.TempDir(), "jsonx.test")
			run(t, root, env, "go", "test", "-c", "-o", bin, "./internal/jsonx")
			if arch.goarch == "386" && runtime.GOARCH != "amd64" {
				t.Skipf("built; a 386 binary runs only on an amd64 host")
			}
			args := []string{bin, "-test.run=" + tests, "-test.short"}
			if arch.runner != "" {
				qemu, err := exec.LookPath(arch.runner)
				if err != nil {
					t.Skipf("built; %s is not installed (apt-get install qemu-user) to run it", arch.runner)
				}
				args = append([]string{qemu}, args...)
			}
			want := map[bool]string{true: "1", false: "0"}[arch.native]
			run(t, ".", append(os.Environ(), wantNativeEnv+"="+want), args...)
		})
	}
}

func run(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
