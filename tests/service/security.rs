//! Security end to end, against the real `chess-server` binary: bearer tokens
//! and roles, SIGHUP reload, endings that stay ended, TLS (grpcurl with `-cacert`, a tonic
//! client with a client certificate, plaintext refused, the certificate reloaded with no
//! restart), the plaintext health port, quotas, and clean logs. Certificates are made at
//! run time (rcgen); no key is committed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::server::{Server, error_info, expect_error};
use chess_service::pb::{self, chess_service_client::ChessServiceClient};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use sha2::{Digest, Sha256};
use tonic::Code;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;

const READER: &str = "reader-token-1";
const PLAYER: &str = "player-token-1";
const ADMIN: &str = "admin-token-1";

/// Adds `authorization: Bearer TOKEN` to every call (no header for `None`).
#[derive(Clone)]
struct Bearer(Option<String>);

impl Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(token) = &self.0 {
            let value: MetadataValue<_> = format!("Bearer {token}")
                .parse()
                .map_err(|_| tonic::Status::internal("bad token text"))?;
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    }
}

type Client = ChessServiceClient<InterceptedService<Channel, Bearer>>;

fn client(channel: &Channel, token: Option<&str>) -> Client {
    ChessServiceClient::with_interceptor(channel.clone(), Bearer(token.map(str::to_string)))
}

fn sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A token file of `(name, role, token)` entries, with a comment.
fn token_file(entries: &[(&str, &str, &str)]) -> String {
    let mut text = String::from("# NAME ROLE SHA256HEX\n");
    for (name, role, token) in entries {
        text.push_str(&format!(
            "{name} {role} {}  # {name}'s token\n",
            sha256_hex(token)
        ));
    }
    text
}

/// A temporary directory with the standard token file as `tokens`.
fn tokens_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("tokens");
    std::fs::write(
        &path,
        token_file(&[
            ("reporting", "read", READER),
            ("matchmaker", "play", PLAYER),
            ("ops", "admin", ADMIN),
        ]),
    )
    .expect("token file written");
    (dir, path)
}

/// A server with the token file of [`tokens_dir`] and a gRPC-Web listener; the directory
/// (kept alive with the server), the server and the listener's address.
fn web_server_with_tokens() -> (tempfile::TempDir, Server, String) {
    let (dir, tokens) = tokens_dir();
    let server = Server::start_with(
        &dir.path().join("data"),
        &[
            "--auth-tokens",
            tokens.to_str().expect("utf-8 path"),
            "--grpc-web-listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    let addr = crate::common::grpc_web::web_addr(&server);
    (dir, server, addr)
}

fn named(id: &str) -> pb::NewGameRequest {
    pb::NewGameRequest {
        game_id: id.into(),
        ..Default::default()
    }
}

fn get(id: &str) -> pb::GetGameRequest {
    pb::GetGameRequest {
        game_id: id.into(),
        ..Default::default()
    }
}

fn undo_req(id: &str) -> pb::UndoRequest {
    pb::UndoRequest {
        game_id: id.into(),
        expected_ply: None,
        color: 0,
        ..Default::default()
    }
}

async fn health_status(channel: Channel, service: &str) -> Result<ServingStatus, tonic::Status> {
    let answer = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await?;
    Ok(answer.into_inner().status())
}

#[tokio::test]
async fn tokens_roles_and_the_open_services() {
    let (dir, tokens) = tokens_dir();
    let server = Server::start_with(
        &dir.path().join("data"),
        &["--auth-tokens", tokens.to_str().expect("utf-8 path")],
        &[],
    );
    let channel = server.channel().await;

    // Health and reflection answer without a token.
    assert_eq!(
        health_status(channel.clone(), "chess.v1.ChessService")
            .await
            .expect("health"),
        ServingStatus::Serving
    );
    let mut reflection =
        tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient::new(
            channel.clone(),
        );
    let ask = tonic_reflection::pb::v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            tonic_reflection::pb::v1::server_reflection_request::MessageRequest::ListServices(
                String::new(),
            ),
        ),
    };
    let mut answers = reflection
        .server_reflection_info(tokio_stream::iter(vec![ask]))
        .await
        .expect("reflection answers without a token")
        .into_inner();
    let listed = answers.message().await.expect("a reflection answer");
    assert!(
        format!("{listed:?}").contains("chess.v1.ChessService"),
        "{listed:?}"
    );

    // No token, a malformed header, an unknown token.
    let status = expect_error(
        client(&channel, None).get_game(get("g")).await,
        Code::Unauthenticated,
        "TOKEN_MISSING",
    );
    assert!(
        status.message().contains("authorization: Bearer"),
        "{status:?}"
    );
    let mut basic =
        ChessServiceClient::with_interceptor(channel.clone(), |mut r: tonic::Request<()>| {
            r.metadata_mut().insert(
                "authorization",
                MetadataValue::from_static("Basic dXNlcjpwdw=="),
            );
            Ok::<_, tonic::Status>(r)
        });
    expect_error(
        basic.get_game(get("g")).await,
        Code::Unauthenticated,
        "TOKEN_MISSING",
    );
    expect_error(
        client(&channel, Some("not-a-token"))
            .get_game(get("g"))
            .await,
        Code::Unauthenticated,
        "TOKEN_UNKNOWN",
    );
    // A hash is not a token.
    expect_error(
        client(&channel, Some(&sha256_hex(PLAYER)))
            .get_game(get("g"))
            .await,
        Code::Unauthenticated,
        "TOKEN_UNKNOWN",
    );

    // read: reads, but changes nothing.
    let mut reader = client(&channel, Some(READER));
    let status = expect_error(
        reader.new_game(named("roles")).await,
        Code::PermissionDenied,
        "ROLE_FORBIDS",
    );
    let info = error_info(&status);
    assert_eq!(info.metadata.get("role").map(String::as_str), Some("read"));
    assert_eq!(
        info.metadata.get("needed").map(String::as_str),
        Some("play")
    );

    // play: creates and plays; read then sees it.
    let mut player = client(&channel, Some(PLAYER));
    player
        .new_game(named("roles"))
        .await
        .expect("play may create");
    player
        .play(crate::common::client::play_request("roles", "e4"))
        .await
        .expect("play may move");
    let game = reader
        .get_game(get("roles"))
        .await
        .expect("read may read")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(game.ply, 1);
    reader
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::GameId("roles".into())),
            ..Default::default()
        })
        .await
        .expect("read may list legal moves");
    reader
        .perft(pb::PerftRequest {
            depth: 2,
            ..Default::default()
        })
        .await
        .expect("read may count perft");
    for refused in [
        reader
            .play(crate::common::client::play_request("roles", "e5"))
            .await
            .map(|_| ()),
        reader.undo(undo_req("roles")).await.map(|_| ()),
        reader
            .resign(pb::ResignRequest {
                game_id: "roles".into(),
                color: pb::Color::Black as i32,
                ..Default::default()
            })
            .await
            .map(|_| ()),
        reader
            .offer_draw(pb::OfferDrawRequest {
                game_id: "roles".into(),
                color: pb::Color::Black as i32,
                ..Default::default()
            })
            .await
            .map(|_| ()),
        reader
            .add_time(pb::AddTimeRequest {
                game_id: "roles".into(),
                color: pb::Color::Black as i32,
                ms: 1000,
                expected_version: None,
                ..Default::default()
            })
            .await
            .map(|_| ()),
    ] {
        let status = refused.expect_err("read changes nothing");
        assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
        assert_eq!(error_info(&status).reason, "ROLE_FORBIDS");
    }
    let unchanged = reader
        .get_game(get("roles"))
        .await
        .expect("read")
        .into_inner();
    assert_eq!(unchanged.game.expect("a game").ply, 1);

    // Every call's span names its caller (a refusal is logged at INFO with its span).
    expect_error(
        player.get_game(get("no-such-game")).await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
    let line = server
        .wait_for_log("GAME_NOT_FOUND", Duration::from_secs(5))
        .expect("the refused call is logged");
    assert!(line.contains("caller=matchmaker"), "{line}");
    assert!(
        !server.log().iter().any(|l| l.contains(PLAYER)),
        "a token reached the log"
    );
}

#[tokio::test]
async fn sighup_reloads_the_token_file_and_a_bad_file_keeps_the_old_one() {
    let (dir, tokens) = tokens_dir();
    let server = Server::start_with(
        &dir.path().join("data"),
        &[],
        &[("CHESS_AUTH_TOKENS", tokens.to_str().expect("utf-8 path"))],
    );
    let channel = server.channel().await;
    client(&channel, Some(PLAYER))
        .new_game(named("hup"))
        .await
        .expect("the first file's token works");

    // The matchmaker's token is rotated: the old one must stop working.
    std::fs::write(
        &tokens,
        token_file(&[("matchmaker", "play", "player-token-2")]),
    )
    .expect("new token file");
    server.signal("HUP");
    server
        .wait_for_log("token file reloaded", Duration::from_secs(10))
        .expect("the reload is logged");
    expect_error(
        client(&channel, Some(PLAYER)).get_game(get("hup")).await,
        Code::Unauthenticated,
        "TOKEN_UNKNOWN",
    );
    client(&channel, Some("player-token-2"))
        .get_game(get("hup"))
        .await
        .expect("the new token works");

    // A broken file is refused and the tokens in force stay.
    std::fs::write(&tokens, "matchmaker play not-a-hash\n").expect("broken token file");
    server.signal("HUP");
    let line = server
        .wait_for_log("token file is refused", Duration::from_secs(10))
        .expect("the refusal is logged");
    assert!(line.contains("line 1"), "{line}");
    client(&channel, Some("player-token-2"))
        .get_game(get("hup"))
        .await
        .expect("the tokens loaded before stay in force");
}

#[tokio::test]
async fn without_tokens_the_server_is_open_and_warns() {
    let server = Server::start(&["--no-reflection"]);
    assert!(
        server
            .wait_for_log("no --auth-tokens", Duration::from_secs(5))
            .is_some_and(|l| l.contains("WARN")),
        "{:?}",
        server.log()
    );
    let channel = server.channel().await;
    let mut anyone = client(&channel, None);
    anyone.new_game(named("open")).await.expect("open server");
    anyone
        .play(crate::common::client::play_request("open", "e4"))
        .await
        .expect("open server");
    anyone
        .resign(pb::ResignRequest {
            game_id: "open".into(),
            color: pb::Color::Black as i32,
            ..Default::default()
        })
        .await
        .expect("resign");
    // Every caller may do everything, reopening a resignation included.
    let game = anyone
        .undo(undo_req("open"))
        .await
        .expect("open: may reopen");
    assert_eq!(
        game.into_inner().game.expect("a game").status(),
        pb::GameStatus::InProgress
    );

    // --no-reflection: reflection is gone; health stays.
    let mut reflection =
        tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient::new(
            channel.clone(),
        );
    let refused = reflection
        .server_reflection_info(tokio_stream::iter(Vec::new()))
        .await
        .map(|_| ())
        .expect_err("no reflection");
    assert_eq!(refused.code(), Code::Unimplemented, "{refused:?}");
    assert_eq!(
        health_status(channel, "").await.expect("health"),
        ServingStatus::Serving
    );
}

#[tokio::test]
async fn endings_a_player_or_the_clock_decided_stay_ended_for_play() {
    let (dir, tokens) = tokens_dir();
    let data = dir.path().join("data");
    let args = ["--auth-tokens", tokens.to_str().expect("utf-8 path")];
    let mut server = Server::start_with(&data, &args, &[]);
    let channel = server.channel().await;
    let mut player = client(&channel, Some(PLAYER));
    let mut admin = client(&channel, Some(ADMIN));

    let final_for_play = |status: tonic::Status, ending: &str| {
        assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
        let info = error_info(&status);
        assert_eq!(info.reason, "ROLE_FORBIDS", "{status:?}");
        assert_eq!(info.metadata.get("role").map(String::as_str), Some("play"));
        assert_eq!(
            info.metadata.get("needed").map(String::as_str),
            Some("admin")
        );
        assert_eq!(
            info.metadata.get("status").map(String::as_str),
            Some(ending)
        );
    };

    // Resignation.
    player.new_game(named("resigned")).await.expect("new");
    player
        .play(crate::common::client::play_request("resigned", "e4"))
        .await
        .expect("e4");
    player
        .resign(pb::ResignRequest {
            game_id: "resigned".into(),
            color: pb::Color::Black as i32,
            ..Default::default()
        })
        .await
        .expect("resign");
    final_for_play(
        player.undo(undo_req("resigned")).await.expect_err("final"),
        "GAME_STATUS_RESIGNATION",
    );

    // An agreed draw.
    player.new_game(named("agreed")).await.expect("new");
    player
        .play(crate::common::client::play_request("agreed", "d4"))
        .await
        .expect("d4");
    player
        .offer_draw(pb::OfferDrawRequest {
            game_id: "agreed".into(),
            color: pb::Color::White as i32,
            ..Default::default()
        })
        .await
        .expect("offer");
    player
        .respond_to_draw(pb::RespondToDrawRequest {
            game_id: "agreed".into(),
            color: pb::Color::Black as i32,
            accept: true,
            ..Default::default()
        })
        .await
        .expect("accept");
    final_for_play(
        player.undo(undo_req("agreed")).await.expect_err("final"),
        "GAME_STATUS_DRAW_AGREEMENT",
    );

    // A claimed draw (threefold, the knights out and back twice).
    player.new_game(named("claimed")).await.expect("new");
    for mv in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"] {
        player
            .play(crate::common::client::play_request("claimed", mv))
            .await
            .expect(mv);
    }
    player
        .claim_draw(pb::ClaimDrawRequest {
            game_id: "claimed".into(),
            color: pb::Color::White as i32,
            ..Default::default()
        })
        .await
        .expect("threefold claim");
    final_for_play(
        player.undo(undo_req("claimed")).await.expect_err("final"),
        "GAME_STATUS_DRAW_CLAIMED_THREEFOLD",
    );

    // A flag fall (recorded by the call itself if the timer has not yet).
    player
        .new_game(pb::NewGameRequest {
            game_id: "flagged".into(),
            time_control: Some(pb::TimeControl {
                initial_ms: 150,
                increment_ms: 0,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("new timed");
    player
        .play(crate::common::client::play_request("flagged", "e4"))
        .await
        .expect("e4");
    tokio::time::sleep(Duration::from_millis(400)).await;
    final_for_play(
        player.undo(undo_req("flagged")).await.expect_err("final"),
        "GAME_STATUS_OUT_OF_TIME",
    );

    // A board ending may be undone with play: fool's mate.
    player.new_game(named("mated")).await.expect("new");
    for mv in ["f3", "e5", "g4", "Qh4#"] {
        player
            .play(crate::common::client::play_request("mated", mv))
            .await
            .expect(mv);
    }
    let undone = player
        .undo(undo_req("mated"))
        .await
        .expect("mate may be undone");
    assert_eq!(
        undone.into_inner().game.expect("a game").status(),
        pb::GameStatus::InProgress
    );

    // admin reopens anything.
    for id in ["resigned", "agreed", "claimed"] {
        let game = admin
            .undo(undo_req(id))
            .await
            .unwrap_or_else(|e| panic!("admin reopens {id}: {e:?}"))
            .into_inner()
            .game
            .expect("a game");
        assert_eq!(game.status(), pb::GameStatus::InProgress, "{id}");
    }

    // A stored history holding such undos replays as before the rule: restart, read back.
    server
        .terminate(Duration::from_secs(20))
        .expect("clean stop");
    let server = Server::start_with(&data, &args, &[]);
    let channel = server.channel().await;
    let reader = &mut client(&channel, Some(READER));
    let game = reader
        .get_game(get("resigned"))
        .await
        .expect("replayed")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(game.status(), pb::GameStatus::InProgress);
    assert_eq!(game.ply, 0, "the resignation and e4 were undone");
    let claimed = reader
        .get_game(get("claimed"))
        .await
        .expect("replayed")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(
        (claimed.status(), claimed.ply),
        (pb::GameStatus::InProgress, 7)
    );
}

// ----------------------------------------------------------------------------------- TLS

/// A certificate authority made for one test.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("CA key");
        Ca {
            issuer: CertifiedIssuer::self_signed(params, key).expect("CA certificate"),
        }
    }

    fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A leaf certificate and its key (PEM), for a server (`localhost`, 127.0.0.1) or a
    /// client named `name`.
    fn leaf(&self, name: &str, server: bool) -> (String, String) {
        let sans = if server {
            vec!["localhost".to_string(), "127.0.0.1".to_string()]
        } else {
            vec![format!("{name}.clients.test")]
        };
        let mut params = CertificateParams::new(sans).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        let key = KeyPair::generate().expect("leaf key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes `text` to `dir/name` atomically (as a Secret volume update does) and returns the path.
fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).expect("file written");
    std::fs::rename(&tmp, &path).expect("file renamed");
    path
}

fn port_of(addr: &str) -> &str {
    addr.rsplit(':').next().expect("a port")
}

async fn tls_channel(
    server: &Server,
    ca_pem: &str,
    identity: Option<&(String, String)>,
) -> Result<Channel, tonic::transport::Error> {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ca_pem))
        .domain_name("localhost");
    if let Some((cert, key)) = identity {
        tls = tls.identity(Identity::from_pem(cert, key));
    }
    Channel::from_shared(format!("https://localhost:{}", port_of(&server.addr)))
        .expect("valid url")
        .tls_config(tls)?
        .connect()
        .await
}

/// The plaintext health port the server logged.
fn health_addr(server: &Server) -> String {
    let line = server
        .wait_for_log("plaintext health service on ", Duration::from_secs(10))
        .expect("the health port is logged");
    line.split("plaintext health service on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("an address")
        .to_string()
}

#[tokio::test]
async fn tls_refuses_plaintext_and_reloads_its_certificate() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let ca = Ca::new("first CA");
    let (cert, key) = ca.leaf("chess-server", true);
    let cert_path = write_file(dir.path(), "tls.crt", &cert);
    let key_path = write_file(dir.path(), "tls.key", &key);
    let (_, tokens) = {
        let path = dir.path().join("tokens");
        std::fs::write(&path, token_file(&[("matchmaker", "play", PLAYER)])).expect("tokens");
        ((), path)
    };
    let server = Server::start_with(
        &dir.path().join("data"),
        &[
            "--tls-cert",
            cert_path.to_str().expect("utf-8"),
            "--tls-key",
            key_path.to_str().expect("utf-8"),
            "--auth-tokens",
            tokens.to_str().expect("utf-8"),
            "--health-listen",
            "127.0.0.1:0",
        ],
        &[],
    );

    // A client that trusts the CA plays over TLS, with its token.
    let channel = tls_channel(&server, &ca.pem(), None)
        .await
        .expect("TLS connects");
    client(&channel, Some(PLAYER))
        .new_game(named("tls"))
        .await
        .expect("NewGame over TLS");

    // Plaintext is refused on the TLS port.
    let plain = Channel::from_shared(server.url())
        .expect("url")
        .connect()
        .await;
    match plain {
        Err(_) => {}
        Ok(channel) => {
            let refused = health_status(channel, "")
                .await
                .expect_err("plaintext refused");
            assert_ne!(refused.code(), Code::Ok);
        }
    }
    // A client that does not trust the CA is refused.
    let stranger = Ca::new("another CA");
    assert!(tls_channel(&server, &stranger.pem(), None).await.is_err());

    // The plaintext health port answers without TLS and without a token.
    let health = Channel::from_shared(format!("http://{}", health_addr(&server)))
        .expect("url")
        .connect()
        .await
        .expect("the health port speaks plaintext");
    assert_eq!(
        health_status(health.clone(), "chess.v1.ChessService")
            .await
            .expect("health"),
        ServingStatus::Serving
    );
    // ... and nothing else.
    let refused = client(&health, Some(PLAYER))
        .get_game(get("tls"))
        .await
        .expect_err("only health on the health port");
    assert_eq!(refused.code(), Code::Unimplemented, "{refused:?}");

    // A new certificate from another CA replaces the file: new connections get it, with
    // no restart.
    let (cert2, key2) = stranger.leaf("chess-server-2", true);
    write_file(dir.path(), "tls.key", &key2);
    write_file(dir.path(), "tls.crt", &cert2);
    server
        .wait_for_log("TLS certificate reloaded", Duration::from_secs(10))
        .expect("the reload is logged");
    let channel = tls_channel(&server, &stranger.pem(), None)
        .await
        .expect("the new certificate serves");
    client(&channel, Some(PLAYER))
        .get_game(get("tls"))
        .await
        .expect("GetGame with the new certificate");
    assert!(
        tls_channel(&server, &ca.pem(), None).await.is_err(),
        "the old certificate no longer serves"
    );
}

#[tokio::test]
async fn mutual_tls_needs_a_client_certificate_from_the_client_ca() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let server_ca = Ca::new("server CA");
    let client_ca = Ca::new("client CA");
    let (cert, key) = server_ca.leaf("chess-server", true);
    let server = Server::start_with(
        &dir.path().join("data"),
        &[],
        &[
            (
                "CHESS_TLS_CERT",
                write_file(dir.path(), "tls.crt", &cert)
                    .to_str()
                    .expect("utf-8"),
            ),
            (
                "CHESS_TLS_KEY",
                write_file(dir.path(), "tls.key", &key)
                    .to_str()
                    .expect("utf-8"),
            ),
            (
                "CHESS_TLS_CLIENT_CA",
                write_file(dir.path(), "client-ca.crt", &client_ca.pem())
                    .to_str()
                    .expect("utf-8"),
            ),
        ],
    );
    let matchmaker = client_ca.leaf("matchmaker", false);
    let channel = tls_channel(&server, &server_ca.pem(), Some(&matchmaker))
        .await
        .expect("a client certificate from the client CA is accepted");
    client(&channel, None)
        .new_game(named("mtls"))
        .await
        .expect("NewGame over mutual TLS");

    // Without a client certificate, or with one from another CA: refused.
    let without = match tls_channel(&server, &server_ca.pem(), None).await {
        Err(_) => true,
        Ok(channel) => client(&channel, None).get_game(get("mtls")).await.is_err(),
    };
    assert!(without, "a client without a certificate is refused");
    let forged = server_ca.leaf("intruder", false);
    let with_other = match tls_channel(&server, &server_ca.pem(), Some(&forged)).await {
        Err(_) => true,
        Ok(channel) => client(&channel, None).get_game(get("mtls")).await.is_err(),
    };
    assert!(with_other, "a certificate from another CA is refused");
}

/// grpcurl the way `tests/grpcurl_walkthrough.sh` finds it under `.ci/run`: the tools
/// venv first, then PATH. Absent outside CI: the test says so loudly and passes; in CI
/// (`CI` set) it fails.
fn grpcurl() -> Option<PathBuf> {
    let venv = std::env::var_os("CHESS_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/venv"));
    let candidates = std::iter::once(venv.join("bin/grpcurl")).chain(
        std::env::var_os("PATH")
            .map(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join("grpcurl"))
                    .collect::<Vec<PathBuf>>()
            })
            .unwrap_or_default(),
    );
    for candidate in candidates {
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    if std::env::var_os("CI").is_some() {
        panic!("grpcurl is missing in CI: `CI_ONLY=tools bash .ci/run` installs it");
    }
    eprintln!(
        "\n*** SKIPPED: grpcurl not found (CI_ONLY=tools bash .ci/run installs it into .ci/venv) ***\n"
    );
    None
}

#[tokio::test]
async fn grpcurl_speaks_tls_with_cacert_and_a_bearer_token() {
    let Some(grpcurl) = grpcurl() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let ca = Ca::new("grpcurl CA");
    let (cert, key) = ca.leaf("chess-server", true);
    let ca_path = write_file(dir.path(), "ca.pem", &ca.pem());
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, token_file(&[("matchmaker", "play", PLAYER)])).expect("tokens");
    let server = Server::start_with(
        &dir.path().join("data"),
        &[
            "--tls-cert",
            write_file(dir.path(), "tls.crt", &cert)
                .to_str()
                .expect("utf-8"),
            "--tls-key",
            write_file(dir.path(), "tls.key", &key)
                .to_str()
                .expect("utf-8"),
            "--auth-tokens",
            tokens.to_str().expect("utf-8"),
        ],
        &[],
    );
    let target = format!("localhost:{}", port_of(&server.addr));
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&grpcurl)
            .arg("-cacert")
            .arg(&ca_path)
            .args(args)
            .output()
            .expect("grpcurl runs");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (ok, out) = run(&[&target, "list"]);
    assert!(ok && out.contains("chess.v1.ChessService"), "{out}");
    let bearer = format!("authorization: Bearer {PLAYER}");
    let (ok, out) = run(&[
        "-H",
        &bearer,
        "-d",
        r#"{"game_id": "via-grpcurl"}"#,
        &target,
        "chess.v1.ChessService/NewGame",
    ]);
    assert!(ok && out.contains("\"gameId\": \"via-grpcurl\""), "{out}");
    let (ok, out) = run(&[
        "-d",
        r#"{"game_id": "via-grpcurl"}"#,
        &target,
        "chess.v1.ChessService/GetGame",
    ]);
    assert!(
        !ok && out.contains("Unauthenticated") && out.contains("TOKEN_MISSING"),
        "{out}"
    );
    // -plaintext against the TLS port fails.
    let out = std::process::Command::new(&grpcurl)
        .args(["-plaintext", "-max-time", "5", &target, "list"])
        .output()
        .expect("grpcurl runs");
    assert!(!out.status.success(), "plaintext must be refused");
}

// -------------------------------------------------------------------------------- quotas

#[tokio::test]
async fn quotas_answer_rate_limited_with_retry_info() {
    let (dir, tokens) = tokens_dir();
    let server = Server::start_with(
        &dir.path().join("data"),
        &[
            "--auth-tokens",
            tokens.to_str().expect("utf-8"),
            "--rate-limit-per-token",
            "20",
            "--games-per-token-per-minute",
            "3",
        ],
        &[],
    );
    let channel = server.channel().await;
    let mut player = client(&channel, Some(PLAYER));

    // Games: three a minute, then RATE_LIMITED with a RetryInfo of up to 20 s.
    for i in 0..3 {
        player
            .new_game(named(&format!("quota-{i}")))
            .await
            .expect("within the games quota");
    }
    let status = expect_error(
        player.new_game(named("quota-3")).await,
        Code::ResourceExhausted,
        "RATE_LIMITED",
    );
    let retry = status
        .get_error_details()
        .retry_info()
        .and_then(|r| r.retry_delay)
        .expect("RetryInfo with a delay");
    assert!(
        retry > Duration::from_secs(5) && retry <= Duration::from_secs(20),
        "{retry:?}"
    );
    assert_eq!(
        error_info(&status)
            .metadata
            .get("quota")
            .map(String::as_str),
        Some("games per minute")
    );
    // Another caller has its own quota.
    client(&channel, Some(ADMIN))
        .new_game(named("quota-admin"))
        .await
        .expect("admin's own quota");

    // Calls: 20 a second; a burst of 60 reads is cut.
    let mut limited = 0;
    let mut delay = None;
    for _ in 0..60 {
        match player.get_game(get("quota-0")).await {
            Ok(_) => {}
            Err(status) => {
                assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
                assert_eq!(error_info(&status).reason, "RATE_LIMITED");
                delay = status
                    .get_error_details()
                    .retry_info()
                    .and_then(|r| r.retry_delay);
                limited += 1;
            }
        }
    }
    assert!(limited >= 20, "only {limited} of 60 calls were limited");
    let delay = delay.expect("RetryInfo");
    assert!(delay <= Duration::from_millis(50), "{delay:?}");
    // After waiting as told, a call goes through.
    tokio::time::sleep(delay + Duration::from_millis(10)).await;
    player
        .get_game(get("quota-0"))
        .await
        .expect("after the wait");
}

// ---------------------------------------------------------------------------- clean logs

#[tokio::test]
async fn client_text_reaches_the_log_escaped_and_bounded() {
    let server = Server::start(&[]);
    let mut client = server.client().await;
    client.new_game(named("logs")).await.expect("new");
    let forged = "e4\nFORGED x";
    let refused = client
        .play(crate::common::client::play_request("logs", forged))
        .await
        .expect_err("not a move");
    assert_eq!(refused.code(), Code::InvalidArgument);
    let long_id = "x".repeat(10 * 1024);
    let refused = client.get_game(get(&long_id)).await.expect_err("too long");
    assert_eq!(refused.code(), Code::InvalidArgument);
    let refused = client
        .get_game(get("bad\r\nid\u{1b}[2J"))
        .await
        .expect_err("bad id");
    assert_eq!(refused.code(), Code::InvalidArgument);

    let line = server
        .wait_for_log("FORGED", Duration::from_secs(5))
        .expect("the refused move is logged");
    assert!(line.contains("e4\\nFORGED x"), "escaped: {line}");
    server
        .wait_for_log("bad\\r\\nid\\u{1b}[2J", Duration::from_secs(5))
        .expect("the bad id is logged escaped");
    let long_line = server
        .wait_for_log("xxxxxxxxxxxxxxxx", Duration::from_secs(5))
        .expect("the long id is logged");
    assert!(long_line.contains("(10240 bytes in all)"), "{long_line}");
    for line in server.log() {
        assert!(!line.starts_with("FORGED"), "a forged log line: {line}");
        assert!(!line.starts_with("id"), "a forged log line: {line}");
        assert!(
            !line.contains('\u{1b}'),
            "an escape sequence reached the log: {line}"
        );
        assert!(line.len() < 2048, "a log line of {} bytes", line.len());
    }
}

#[tokio::test]
async fn grpc_web_calls_need_the_same_tokens_and_roles() {
    use crate::common::grpc_web::call_http1;
    use prost::Message as _;

    let (_dir, _server, addr) = web_server_with_tokens();
    let new_game = named("web-token").encode_to_vec();
    let path = "/chess.v1.ChessService/NewGame";
    let bearer = |token: &str| format!("Bearer {token}");
    let status = |answer: crate::common::grpc_web::HttpAnswer| answer.grpc_status();

    let none = call_http1(&addr, path, &new_game, &[]).await;
    assert_eq!(status(none), Some(Code::Unauthenticated as i32));
    let wrong = call_http1(
        &addr,
        path,
        &new_game,
        &[("Authorization", &bearer("nope"))],
    )
    .await;
    assert_eq!(status(wrong), Some(Code::Unauthenticated as i32));
    let reader = call_http1(
        &addr,
        path,
        &new_game,
        &[("Authorization", &bearer(READER))],
    )
    .await;
    assert_eq!(status(reader), Some(Code::PermissionDenied as i32));
    let player = call_http1(
        &addr,
        path,
        &new_game,
        &[("Authorization", &bearer(PLAYER))],
    )
    .await;
    assert_eq!(status(player), Some(0));
}

/// Over HTTP/1.1, a refused call (here: no token) is answered only after its body is
/// read: a client that sends the body a moment after its headers, as connect-node does,
/// reads the answer and keeps its connection, where an answer sent first made its write
/// fail with a broken pipe and reported an INTERNAL error instead of UNAUTHENTICATED.
#[tokio::test]
async fn a_grpc_web_refusal_over_http1_waits_for_the_body_and_keeps_the_connection() {
    use crate::common::raw_grpc::frame;
    use prost::Message as _;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (_dir, _server, addr) = web_server_with_tokens();
    let body = frame(0, &named("web-late-body").encode_to_vec());
    let head = |close: bool| {
        format!(
            "POST /chess.v1.ChessService/NewGame HTTP/1.1\r\nHost: {addr}\r\n\
             Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n\
             Content-Length: {}\r\n{}\r\n",
            body.len(),
            if close { "Connection: close\r\n" } else { "" }
        )
    };
    let mut tcp = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connects");
    for close in [false, true] {
        tcp.write_all(head(close).as_bytes())
            .await
            .expect("headers");
        tokio::time::sleep(Duration::from_millis(200)).await;
        tcp.write_all(&body)
            .await
            .expect("the body is still read after a refusal");
    }
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut raw))
        .await
        .expect("both answers within 10 s")
        .expect("the connection ends cleanly, not reset");
    let text = String::from_utf8_lossy(&raw)
        .to_lowercase()
        .replace("grpc-status: ", "grpc-status:");
    assert_eq!(
        text.matches("http/1.1 200").count(),
        2,
        "two answers on one connection: {text}"
    );
    assert_eq!(
        text.matches("grpc-status:16").count(),
        2,
        "each is UNAUTHENTICATED: {text}"
    );
}
