//! WatchGame: a spectator's stream, fed by a task from the registry's subscription (the
//! backlog, then the live events), each event converted to `chess.v1` once and shared by
//! every spectator of the game.

use tokio_stream::wrappers::ReceiverStream;

use crate::pb;
use crate::pb::watch_game_response::Message;
use crate::registry::WatchItem;
use crate::service::edge::auth::Tenant;
use crate::service::game_key::GameKey;

use super::convert;
use super::validate::validate_game_id;
use super::{ChessService, ServiceError};

/// Messages a spectator's stream buffers between its forwarding task and the transport.
/// Small: the per-game broadcast buffer is the one that bounds how far a spectator may
/// fall behind.
const WATCH_STREAM_BUFFER: usize = 16;

/// A spectator's stream of `chess.v1` messages.
pub type WatchStream = ReceiverStream<Result<pb::WatchGameResponse, tonic::Status>>;

impl ChessService {
    /// Subscribes (the backlog and the live channel) and starts the task that feeds the
    /// spectator's stream. The call itself ends here; the stream does not count as a call
    /// in flight, and the registry's shutdown ends it.
    pub(super) async fn watch_game(
        &self,
        req: pb::WatchGameRequest,
        tenant: Option<Tenant>,
    ) -> Result<WatchStream, ServiceError> {
        validate_game_id(&req.game_id)?;
        let key = GameKey::key_of(tenant.as_ref(), &req.game_id);
        let mut sub = self.registry.subscribe(&key, req.from_version).await?;
        let (tx, rx) = tokio::sync::mpsc::channel(WATCH_STREAM_BUFFER);
        let id = key;
        let meta = sub.meta().clone();
        let spectator = crate::service::edge::metrics::spectator();
        tokio::spawn(async move {
            let _spectator = spectator; // counted while the stream is fed
            loop {
                let item = tokio::select! {
                    item = sub.next() => item,
                    () = tx.closed() => break,
                };
                let (message, last) = match item {
                    WatchItem::Event(event) => {
                        let event = event.sent_as(|r| convert::event_to_pb(&meta, r));
                        (
                            Ok(pb::WatchGameResponse {
                                message: Some(Message::Event(event)),
                            }),
                            false,
                        )
                    }
                    WatchItem::Resync(version) => {
                        tracing::info!(game_id = %id, resume_from_version = version, "a spectator fell behind; told to resync");
                        (
                            Ok(pb::WatchGameResponse {
                                message: Some(Message::Resync(pb::Resync {
                                    resume_from_version: version,
                                })),
                            }),
                            true,
                        )
                    }
                    WatchItem::End(e) => {
                        let refused = ServiceError::from(e);
                        crate::service::edge::metrics::refused(refused.reason());
                        (Err(refused.into()), true)
                    }
                };
                if tx.send(message).await.is_err() || last {
                    break;
                }
            }
        });
        Ok(ReceiverStream::new(rx))
    }
}
