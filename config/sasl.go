package config

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/kafkas3/kafkas3/kafkaauth"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The JAAS login modules of the mechanisms, as Java clients name them.
const (
	jaasPlain  = "org.apache.kafka.common.security.plain.PlainLoginModule"
	jaasScram  = "org.apache.kafka.common.security.scram.ScramLoginModule"
	jaasOAuth  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	jaasMSKIAM = "software.amazon.msk.auth.iam.IAMLoginModule"
	jaasKrb5   = "com.sun.security.auth.module.Krb5LoginModule"
)

// jaasSpec is what kafkas3 understands of a mechanism's login module:
// its class, the options it reads, and those it accepts without effect.
type jaasSpec struct {
	module  string
	options []string
	inert   []string
	prefix  string // options starting with it are understood too
}

// jaasSpecOf returns the login module spec of a SASL mechanism.
func jaasSpecOf(mech string) jaasSpec {
	switch mech {
	case "PLAIN":
		return jaasSpec{module: jaasPlain, options: []string{"username", "password"}}
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		return jaasSpec{module: jaasScram, options: []string{"username", "password"}}
	case "OAUTHBEARER":
		return jaasSpec{module: jaasOAuth, options: []string{"clientId", "clientSecret", "scope"}, prefix: "extension_"}
	case "AWS_MSK_IAM":
		return jaasSpec{module: jaasMSKIAM, options: []string{"awsProfileName", "awsRoleArn", "awsRoleSessionName", "awsRoleExternalId", "awsStsRegion"},
			inert: []string{"awsDebugCreds", "awsMaxRetries", "awsMaxBackOffTimeMs"}}
	case "GSSAPI":
		return jaasSpec{module: jaasKrb5, options: []string{"useKeyTab", "keyTab", "principal", "serviceName", "useTicketCache"},
			inert: []string{"storeKey", "doNotPrompt", "isInitiator", "refreshKrb5Config", "debug"}}
	}
	return jaasSpec{}
}

// jaas parses sasl.jaas.config for mech: set is false when it is unset,
// ok false after a problem (reported once, naming options, never their
// values).
func (p *valueParser) jaas(mech string) (j kafkaauth.JAAS, set, ok bool) {
	k := p.k.SASLJaasConfig
	v := p.str(k)
	if v == "" {
		return j, false, true
	}
	if mech == "" {
		if p.ok(p.k.SASLMechanism) {
			p.fail(k, v, "is set without sasl.mechanism; set the mechanism whose login module it configures")
		}
		return j, true, false
	}
	j, err := kafkaauth.ParseJAAS(v)
	if err != nil {
		p.fail(k, v, err.Error())
		return j, true, false
	}
	spec := jaasSpecOf(mech)
	if j.Module != spec.module {
		p.fail(k, v, fmt.Sprintf("names the login module %s; sasl.mechanism %s takes %s", j.Module, mech, spec.module))
		return j, true, false
	}
	var unknown []string
	for _, o := range j.Unknown(append(spec.options, spec.inert...)...) {
		if spec.prefix == "" || !strings.HasPrefix(o, spec.prefix) {
			unknown = append(unknown, o)
		}
	}
	if len(unknown) > 0 {
		p.fail(k, v, fmt.Sprintf("has the option(s) %s, which kafkas3 does not understand for %s; it reads %s",
			strings.Join(unknown, ", "), spec.module, strings.Join(append(spec.options, spec.inert...), ", ")))
		return j, true, false
	}
	return j, true, true
}

// fromKeyOrJAAS returns the value of key, else the JAAS option opt. Both
// set is a problem (reported by the rules); ok is false then.
func (p *valueParser) fromKeyOrJAAS(key StringKey, j kafkaauth.JAAS, opt string) (string, bool) {
	kv, jv := p.str(key), j.Options[opt]
	if kv != "" && jv != "" {
		return "", false
	}
	if kv != "" {
		return kv, true
	}
	return jv, true
}

// saslMechanism builds the mechanism of sasl.mechanism; nil when unset,
// incomplete (the rules report what is missing) or after a problem.
func (p *valueParser) saslMechanism() sasl.Mechanism {
	mech := p.choice(p.k.SASLMechanism)
	j, _, ok := p.jaas(mech)
	if mech == "" || !ok {
		return nil
	}
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		user, okU := p.fromKeyOrJAAS(p.k.SASLUsername, j, "username")
		pass, okP := p.fromKeyOrJAAS(p.k.SASLPassword, j, "password")
		if !okU || !okP || user == "" || pass == "" {
			return nil
		}
		switch mech {
		case "PLAIN":
			return plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		}
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	case "OAUTHBEARER":
		return p.oauthBearer(j)
	case "AWS_MSK_IAM":
		return p.mskIAM(j)
	case "GSSAPI":
		return p.gssapi(j)
	}
	return nil
}

// extensions returns the SASL extensions of the jaas options
// extension_<name>.
func extensions(j kafkaauth.JAAS) map[string]string {
	var ext map[string]string
	for o, v := range j.Options {
		if name, ok := strings.CutPrefix(o, "extension_"); ok {
			if ext == nil {
				ext = map[string]string{}
			}
			ext[name] = v
		}
	}
	return ext
}

// oauthBearer builds OAUTHBEARER from a token file or client credentials.
func (p *valueParser) oauthBearer(j kafkaauth.JAAS) sasl.Mechanism {
	k := p.k
	u := p.str(k.SASLOAuthTokenEndpointURL)
	if u == "" {
		return nil // the rule reports it
	}
	path, isFile, err := kafkaauth.TokenFilePath(u)
	switch {
	case err != nil:
		p.fail(k.SASLOAuthTokenEndpointURL, u, err.Error())
		return nil
	case isFile:
		if _, err := os.Stat(path); err != nil {
			p.fail(k.SASLOAuthTokenEndpointURL, u, fmt.Sprintf("names a token file that cannot be read (%v)", err))
			return nil
		}
		return kafkaauth.TokenFile{Path: path, Extensions: extensions(j), Claims: p.claimNames()}.Mechanism()
	}
	if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		p.fail(k.SASLOAuthTokenEndpointURL, u, "is neither a file: URL nor an http(s) URL; want file:/path/to/token or https://idp.example.com/oauth2/token")
		return nil
	}
	id, okID := p.fromKeyOrJAAS(k.SASLOAuthClientID, j, "clientId")
	secret, okS := p.fromKeyOrJAAS(k.SASLOAuthClientSecret, j, "clientSecret")
	scope, okScope := p.fromKeyOrJAAS(k.SASLOAuthScope, j, "scope")
	if !okID || !okS || !okScope || id == "" || secret == "" {
		return nil // the rules report it
	}
	return kafkaauth.ClientCredentials{URL: u, ClientID: id, ClientSecret: secret, Scope: scope,
		URLEncodeHeader: p.bool(k.SASLOAuthHeaderURLEncode), Extensions: extensions(j), Claims: p.claimNames(), HTTP: p.tokenHTTPClient()}.Mechanism()
}

// claimNames reads sasl.oauthbearer.sub.claim.name and .scope.claim.name.
func (p *valueParser) claimNames() kafkaauth.ClaimNames {
	return kafkaauth.ClaimNames{Subject: p.nonEmpty(p.k.SASLOAuthSubClaimName), Scope: p.nonEmpty(p.k.SASLOAuthScopeClaimName)}
}

// tokenHTTPClient is the HTTP client of the token endpoint, with
// sasl.login.connect.timeout.ms and sasl.login.read.timeout.ms.
func (p *valueParser) tokenHTTPClient() *http.Client {
	connect, read := p.millis(p.k.SASLLoginConnectTimeoutMs), p.millis(p.k.SASLLoginReadTimeoutMs)
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect}).DialContext,
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: read,
	}, Timeout: connect + read}
}

// mskIAM builds AWS_MSK_IAM with the credentials the jaas options name
// (the default chain without options).
func (p *valueParser) mskIAM(j kafkaauth.JAAS) sasl.Mechanism {
	o := j.Options
	creds, err := kafkaauth.MSKCredentials(context.Background(), kafkaauth.MSKCredentialsConfig{
		Profile: o["awsProfileName"], RoleARN: o["awsRoleArn"], SessionName: o["awsRoleSessionName"],
		ExternalID: o["awsRoleExternalId"], STSRegion: o["awsStsRegion"]})
	if err != nil {
		p.fail(p.k.SASLJaasConfig, p.str(p.k.SASLJaasConfig), fmt.Sprintf("gives AWS_MSK_IAM no credentials: %v", err))
		return nil
	}
	return kafkaauth.MSKIAM{Credentials: creds}.Mechanism()
}

// gssapi builds GSSAPI from the keytab and principal of the jaas options.
func (p *valueParser) gssapi(j kafkaauth.JAAS) sasl.Mechanism {
	k, o := p.k, j.Options
	service, okS := p.fromKeyOrJAAS(k.SASLKerberosServiceName, j, "serviceName")
	if !okS || service == "" || !strings.EqualFold(o["useKeyTab"], "true") || o["keyTab"] == "" || o["principal"] == "" ||
		strings.EqualFold(o["useTicketCache"], "true") {
		return nil // the rules report it
	}
	jv := p.str(k.SASLJaasConfig)
	kt, err := kafkaauth.LoadKeytab(o["keyTab"])
	if err != nil {
		p.fail(k.SASLJaasConfig, jv, fmt.Sprintf("names the keyTab %s, which %v", o["keyTab"], err))
		return nil
	}
	confPath := p.str(k.Kafkas3Krb5Conf)
	krb5, err := kafkaauth.LoadKrb5Conf(confPath)
	if err != nil {
		p.fail(k.Kafkas3Krb5Conf, confPath, fmt.Sprintf("is not a readable krb5.conf (%v); GSSAPI needs one", err))
		return nil
	}
	m, err := kafkaauth.Kerberos{Keytab: kt, Krb5: krb5, Principal: o["principal"], Service: service}.Mechanism()
	if err != nil {
		p.fail(k.SASLJaasConfig, jv, fmt.Sprintf("names the principal %s, which %v (keyTab %s)", o["principal"], err, o["keyTab"]))
		return nil
	}
	return m
}

// saslNeedCtx returns the mechanism and its parsed jaas config for the
// rules; ok is false when there is no mechanism or a problem was already
// reported on one of them.
func (p *valueParser) saslNeedCtx(mechs ...string) (string, kafkaauth.JAAS, bool) {
	mech := p.choice(p.k.SASLMechanism)
	if mech == "" || !p.ok(p.k.SASLMechanism) || !slices.Contains(mechs, mech) {
		return mech, kafkaauth.JAAS{}, false
	}
	j, _, ok := p.jaas(mech)
	return mech, j, ok
}

// needKeyOrJAAS reports key as missing when neither it nor the JAAS
// option opt is set, and both when both are.
func (p *valueParser) needKeyOrJAAS(key StringKey, j kafkaauth.JAAS, opt, why string) {
	kv, jv := p.str(key), j.Options[opt]
	switch {
	case kv != "" && jv != "":
		p.fail(key, kv, fmt.Sprintf("is set together with sasl.jaas.config's %s; set one of them", opt))
	case kv == "" && jv == "" && p.ok(key):
		p.missing(key, why+"; or set sasl.jaas.config's "+opt)
	}
}

// saslUserPassNeeds: PLAIN and SCRAM need a user and a password.
func (p *valueParser) saslUserPassNeeds() {
	mech, j, ok := p.saslNeedCtx("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
	if !ok {
		return
	}
	p.needKeyOrJAAS(p.k.SASLUsername, j, "username", "sasl.mechanism is "+mech)
	p.needKeyOrJAAS(p.k.SASLPassword, j, "password", "sasl.mechanism is "+mech)
}

// oauthNeeds: OAUTHBEARER needs the endpoint URL and, for an http(s)
// one, the client credentials.
func (p *valueParser) oauthNeeds() {
	_, j, ok := p.saslNeedCtx("OAUTHBEARER")
	if !ok {
		return
	}
	k := p.k
	u := p.str(k.SASLOAuthTokenEndpointURL)
	if u == "" {
		p.missing(k.SASLOAuthTokenEndpointURL, "sasl.mechanism is OAUTHBEARER; a file:/path of a token file or the http(s) URL of the OAuth token endpoint")
		return
	}
	if !p.ok(k.SASLOAuthTokenEndpointURL) {
		return
	}
	if _, isFile, _ := kafkaauth.TokenFilePath(u); isFile {
		for _, h := range []StringKey{k.SASLOAuthClientID, k.SASLOAuthClientSecret, k.SASLOAuthScope} {
			if v := p.str(h); v != "" {
				p.fail(h, v, "is not used with a token file (sasl.oauthbearer.token.endpoint.url is a file: URL); remove it")
			}
		}
		for _, o := range []string{"clientId", "clientSecret", "scope"} {
			if j.Options[o] != "" {
				p.fail(k.SASLJaasConfig, p.str(k.SASLJaasConfig), "has the option "+o+", which is not used with a token file (sasl.oauthbearer.token.endpoint.url is a file: URL); remove it")
			}
		}
		return
	}
	why := "sasl.oauthbearer.token.endpoint.url is a token endpoint"
	p.needKeyOrJAAS(k.SASLOAuthClientID, j, "clientId", why)
	p.needKeyOrJAAS(k.SASLOAuthClientSecret, j, "clientSecret", why)
	if v := p.str(k.SASLOAuthScope); v != "" && j.Options["scope"] != "" {
		p.fail(k.SASLOAuthScope, v, "is set together with sasl.jaas.config's scope; set one of them")
	}
}

// gssapiNeeds: GSSAPI needs the service name and a keytab login.
func (p *valueParser) gssapiNeeds() {
	_, j, ok := p.saslNeedCtx("GSSAPI")
	if !ok {
		return
	}
	k := p.k
	p.needKeyOrJAAS(k.SASLKerberosServiceName, j, "serviceName", "sasl.mechanism is GSSAPI; the brokers' Kerberos service name, usually kafka")
	jv := p.str(k.SASLJaasConfig)
	const login = "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/path/to/client.keytab\" principal=\"name@REALM\";"
	switch o := j.Options; {
	case jv == "":
		p.missing(k.SASLJaasConfig, "sasl.mechanism is GSSAPI; kafkas3 logs in with a keytab: "+login)
	case strings.EqualFold(o["useTicketCache"], "true"):
		p.fail(k.SASLJaasConfig, jv, "sets useTicketCache=true; kafkas3 logs in with a keytab only: "+login)
	case !strings.EqualFold(o["useKeyTab"], "true") || o["keyTab"] == "" || o["principal"] == "":
		p.fail(k.SASLJaasConfig, jv, "does not set useKeyTab=true, keyTab and principal; kafkas3 logs in with a keytab: "+login)
	}
}

// saslForeignKeys refuses the keys of a mechanism other than the one set.
func (p *valueParser) saslForeignKeys() {
	mech := p.choice(p.k.SASLMechanism)
	if mech == "" || !p.ok(p.k.SASLMechanism) {
		return
	}
	k := p.k
	owners := []struct {
		mechs []string
		keys  []StringKey
	}{
		{[]string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}, []StringKey{k.SASLUsername, k.SASLPassword}},
		{[]string{"OAUTHBEARER"}, []StringKey{k.SASLOAuthTokenEndpointURL, k.SASLOAuthClientID, k.SASLOAuthClientSecret, k.SASLOAuthScope}},
		{[]string{"GSSAPI"}, []StringKey{k.SASLKerberosServiceName}},
	}
	for _, o := range owners {
		if slices.Contains(o.mechs, mech) {
			continue
		}
		for _, h := range o.keys {
			if v := p.str(h); v != "" {
				p.fail(h, v, fmt.Sprintf("belongs to sasl.mechanism %s, not %s; remove it", strings.Join(o.mechs, " or "), mech))
			}
		}
	}
}
