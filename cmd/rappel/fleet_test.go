package main

import (
	"testing"

	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// TestMain stops the PostgreSQL server the fleet tests start (pgtest).
func TestMain(m *testing.M) { pgtest.Main(m) }
