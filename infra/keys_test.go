package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/envelope"
)

// signingKey is the stack's KMS key for sealed secrets (there may be
// another, the alarm topic's, in prod).
func (s *synthesized) signingKey(t *testing.T) (string, map[string]any) {
	t.Helper()
	for id, r := range s.resources("AWS::KMS::Key") {
		if strings.HasPrefix(id, "SigningKey") {
			return id, r
		}
	}
	t.Fatal("no SigningKey KMS key")
	return "", nil
}

func (s *synthesized) signingKeyID(t *testing.T) string {
	id, _ := s.signingKey(t)
	return id
}

// alarmTopicKeyID is the prod alarm topic's key (the other KMS key).
func (s *synthesized) alarmTopicKeyID(t *testing.T) string {
	t.Helper()
	for id := range s.resources("AWS::KMS::Key") {
		if strings.HasPrefix(id, "AlarmTopicKey") {
			return id
		}
	}
	t.Fatal("no AlarmTopicKey KMS key")
	return ""
}

// The key that seals signing secrets rotates, outlives a production stack,
// and is named to api and deliver only.
func TestSigningKeyRotatesAndIsNamedToApiAndDeliver(t *testing.T) {
	for _, v := range []string{"dev", "prod", "localstack"} {
		s := synth(t, v)
		id, key := s.signingKey(t)
		if props(key)["EnableKeyRotation"] != true {
			t.Errorf("%s: key rotation is off", v)
		}
		want := "Delete"
		if v == "prod" {
			want = "Retain" // every sealed secret in the table and its backups needs it
		}
		if key["DeletionPolicy"] != want || key["UpdateReplacePolicy"] != want {
			t.Errorf("%s: DeletionPolicy %v UpdateReplacePolicy %v, want %s", v, key["DeletionPolicy"], key["UpdateReplacePolicy"], want)
		}
		for _, fn := range Functions {
			_, f := s.functionByName(t, fn)
			vars, _ := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)
			got, has := vars["KMS_KEY_ID"]
			_, needs := signingKeyGrants[fn]
			switch {
			case needs && render(got) != "${"+id+".Arn}":
				t.Errorf("%s %s: KMS_KEY_ID = %v, want the signing key's ARN", v, fn, render(got))
			case !needs && has:
				t.Errorf("%s %s: has KMS_KEY_ID; it reads no secret", v, fn)
			}
		}
	}
}

// Each role's KMS actions on the key, exactly, and only with the envelope's
// encryption context.
func TestSigningKeyGrantsAreLeastPrivilege(t *testing.T) {
	s := synth(t, "dev")
	keyID, _ := s.signingKey(t)
	keyArn := "${" + keyID + ".Arn}"
	got := map[string][]string{}
	for _, r := range s.resources("AWS::IAM::Policy") {
		var roles []string
		for _, role := range list(props(r)["Roles"]) {
			roles = append(roles, strings.Trim(render(role), "${}"))
		}
		for _, st := range list(props(r)["PolicyDocument"].(map[string]any)["Statement"]) {
			st := st.(map[string]any)
			var actions []string
			for _, a := range list(st["Action"]) {
				if strings.HasPrefix(a.(string), "kms:") {
					actions = append(actions, a.(string))
				}
			}
			if len(actions) == 0 {
				continue
			}
			for _, res := range list(st["Resource"]) {
				if render(res) != keyArn {
					t.Errorf("kms actions %v on %s, not the signing key", actions, render(res))
				}
			}
			cond, _ := st["Condition"].(map[string]any)["StringEquals"].(map[string]any)
			for k, v := range envelope.EncryptionContext {
				if cond["kms:EncryptionContext:"+k] != v {
					t.Errorf("kms grant %v without the encryption context %s=%s: %v", actions, k, v, st["Condition"])
				}
			}
			for _, role := range roles {
				got[role] = append(got[role], actions...)
			}
		}
	}
	for _, fn := range Functions {
		_, f := s.functionByName(t, fn)
		role := strings.TrimSuffix(strings.Trim(render(props(f)["Role"]), "${}"), ".Arn")
		have := append([]string(nil), got[role]...)
		want := append([]string(nil), signingKeyGrants[fn]...)
		sort.Strings(have)
		sort.Strings(want)
		if strings.Join(have, ",") != strings.Join(want, ",") {
			t.Errorf("%s: kms actions %v, want %v", fn, have, want)
		}
	}
	if len(signingKeyGrants[FnDeliver]) != 1 || signingKeyGrants[FnDeliver][0] != "kms:Decrypt" {
		t.Error("deliver must only decrypt: it never makes a data key")
	}
}
