package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/oauth2"

	"github.com/wshub/wshub/core"
)

// Discord is the Discord application people may sign in with (ClientID "": none).
type Discord struct {
	ClientID     string
	ClientSecret string
	// HTTPClient reaches Discord (nil: http.DefaultClient; tests: a fake Discord).
	HTTPClient *http.Client
}

// discordScopes: who the person is, their servers, and their roles in one (for a
// binding's role gate).
var discordScopes = []string{"identify", "guilds", "guilds.members.read"}

func (a *app) discordConfig() oauth2.Config {
	return oauth2.Config{ClientID: a.opts.Discord.ClientID, ClientSecret: a.opts.Discord.ClientSecret, Scopes: discordScopes,
		RedirectURL: a.redirectBase() + "/app/signin/discord/callback",
		Endpoint: oauth2.Endpoint{AuthURL: discordgo.EndpointDiscord + "oauth2/authorize", TokenURL: discordgo.EndpointOAuth2 + "token",
			AuthStyle: oauth2.AuthStyleInHeader}}
}

func (a *app) discordHTTP(ctx context.Context) context.Context {
	if a.opts.Discord.HTTPClient != nil {
		return context.WithValue(ctx, oauth2.HTTPClient, a.opts.Discord.HTTPClient)
	}
	return ctx
}

// startDiscord sends the browser to Discord's consent page, with state and PKCE.
func (a *app) startDiscord(c *fiber.Ctx) error {
	if a.opts.Discord.ClientID == "" {
		return a.refuse(c, fiber.StatusNotFound, "This hub has no Discord sign-in configured.")
	}
	state, verifier := randomString(), oauth2.GenerateVerifier()
	a.setSignInCookie(c, state+".discord."+verifier)
	conf := a.discordConfig()
	return c.Redirect(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), fiber.StatusSeeOther)
}

// finishDiscord takes Discord's answer: the code exchanged, then the person and their
// servers read with discordgo on their token.
func (a *app) finishDiscord(c *fiber.Ctx) error {
	if a.opts.Discord.ClientID == "" {
		return a.refuse(c, fiber.StatusNotFound, "This hub has no Discord sign-in configured.")
	}
	state, _, verifier, ok := splitSignIn(a.takeSignInCookie(c))
	if e := c.Query("error"); e != "" {
		return a.refuse(c, fiber.StatusUnauthorized, "Discord refused: "+e)
	}
	if !ok || c.Query("state") != state || c.Query("code") == "" {
		return a.refuse(c, fiber.StatusBadRequest, errSignIn.Error())
	}
	ctx := a.discordHTTP(c.UserContext())
	conf := a.discordConfig()
	tok, err := conf.Exchange(ctx, c.Query("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		a.log.Warn("app sign-in: Discord code exchange failed", "err", err)
		return a.refuse(c, fiber.StatusUnauthorized, "Discord did not accept the sign-in; start again.")
	}
	dg, err := discordgo.New("Bearer " + tok.AccessToken)
	if err != nil {
		return a.fail(c, err)
	}
	if a.opts.Discord.HTTPClient != nil {
		dg.Client = a.opts.Discord.HTTPClient
	}
	me, err := dg.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		a.log.Warn("app sign-in: Discord did not say who signed in", "err", err)
		return a.refuse(c, fiber.StatusBadGateway, "Discord did not say who you are; try again.")
	}
	guilds, err := dg.UserGuilds(200, "", "", false, discordgo.WithContext(ctx))
	if err != nil {
		return a.refuse(c, fiber.StatusBadGateway, "Discord did not list your servers; try again.")
	}
	ids := make([]string, len(guilds))
	for i, g := range guilds {
		ids[i] = g.ID
	}
	id, err := core.NewIdentity(core.IdentityDiscord, me.ID)
	if err != nil {
		return a.refuse(c, fiber.StatusBadGateway, "Discord gave an unexpected user id.")
	}
	name := me.GlobalName
	if name == "" {
		name = me.Username
	}
	s, token, err := a.core.SignIn(c.UserContext(), core.SignInInput{Identity: id, Name: name, Discord: &core.DiscordSignIn{
		Guilds: ids,
		RolesIn: func(ctx context.Context, guildID string) ([]string, error) {
			m, err := dg.UserGuildMember(guildID, discordgo.WithContext(a.discordHTTP(ctx)))
			if err != nil {
				return nil, err
			}
			return m.Roles, nil
		}}})
	return a.signedIn(c, s, token, err)
}

// setSignInCookie keeps a sign-in's secrets on the browser until the provider's return.
func (a *app) setSignInCookie(c *fiber.Ctx, value string) {
	c.Cookie(&fiber.Cookie{Name: a.signInCookieName(), Value: value, Path: "/",
		Expires: a.opts.Now().Add(signInCookieLife), HTTPOnly: true, Secure: !a.opts.Insecure, SameSite: fiber.CookieSameSiteLaxMode})
}

// takeSignInCookie reads the sign-in's cookie and clears it: it serves once.
func (a *app) takeSignInCookie(c *fiber.Ctx) string {
	v := c.Cookies(a.signInCookieName())
	c.Cookie(&fiber.Cookie{Name: a.signInCookieName(), Value: "", Path: "/", MaxAge: -1, Expires: time.Unix(1, 0), HTTPOnly: true,
		Secure: !a.opts.Insecure, SameSite: fiber.CookieSameSiteLaxMode})
	return strings.TrimSpace(v)
}
