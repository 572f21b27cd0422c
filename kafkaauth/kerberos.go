package kafkaauth

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/kerberos"
)

// Kerberos is GSSAPI with a keytab, as Java's Krb5LoginModule with
// useKeyTab=true: the client logs in as Principal with the key of the
// keytab and gets a ticket for Service/<broker host> for each broker.
type Kerberos struct {
	Keytab    *keytab.Keytab
	Krb5      *krbconfig.Config
	Principal string // name@REALM; the realm defaults to krb5.conf's default_realm
	Service   string // sasl.kerberos.service.name, e.g. kafka
}

// LoadKeytab reads a keytab file.
func LoadKeytab(path string) (*keytab.Keytab, error) {
	kt, err := keytab.Load(path)
	if err != nil {
		return nil, fmt.Errorf("is not a readable keytab: %w", err)
	}
	return kt, nil
}

// LoadKrb5Conf reads a krb5.conf file.
func LoadKrb5Conf(path string) (*krbconfig.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := krbconfig.NewFromString(string(b))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return c, nil
}

// SplitPrincipal splits name@REALM; a principal without a realm gets
// defaultRealm.
func SplitPrincipal(principal, defaultRealm string) (name, realm string, err error) {
	name, realm, ok := strings.Cut(principal, "@")
	if !ok {
		realm = defaultRealm
	}
	if name == "" || realm == "" {
		return "", "", errors.New("is not a Kerberos principal; want name@REALM (or a name with default_realm set in krb5.conf)")
	}
	return name, realm, nil
}

// Mechanism checks that the keytab holds a key of the principal and
// returns the mechanism; its client logs in at the first authentication
// and is shared by every connection of every Kafka client given the
// mechanism (it renews its tickets itself). It is not a
// sasl.ClosingMechanism: a command's clients share one mechanism, and
// the first to close would otherwise log the others out.
func (k Kerberos) Mechanism() (sasl.Mechanism, error) {
	name, realm, err := SplitPrincipal(k.Principal, k.Krb5.LibDefaults.DefaultRealm)
	if err != nil {
		return nil, err
	}
	if !k.hasKey(name, realm) {
		return nil, fmt.Errorf("has no key in the keytab (looked for %s@%s)", name, realm)
	}
	cl := client.NewWithKeytab(name, realm, k.Keytab, k.Krb5, client.DisablePAFXFAST(true))
	return kerberos.Auth{Client: cl, Service: k.Service}.AsMechanism(), nil
}

// hasKey reports whether the keytab has an entry of name@realm.
func (k Kerberos) hasKey(name, realm string) bool {
	pn := types.NewPrincipalName(1, name) // KRB_NT_PRINCIPAL
	for _, e := range k.Keytab.Entries {
		if e.Principal.Realm == realm && strings.Join(e.Principal.Components, "/") == strings.Join(pn.NameString, "/") {
			return true
		}
	}
	return false
}
