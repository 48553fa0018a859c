#include "protocol/messages.h"

namespace sluice::brokerd::protocol {

MessageType TypeOf(const Message& message) {
  // The variant's alternatives are in type-number order.
  return static_cast<MessageType>(message.index() + 1);
}

uint16_t FirstVersionOf(MessageType type) {
  switch (type) {
    case MessageType::kStreamGap:
      return kIsolationAndGapVersion;
    case MessageType::kProduce:
    case MessageType::kProducing:
      return kProduceVersion;
    case MessageType::kSubscribe:
    case MessageType::kSubscribed:
    case MessageType::kRelease:
    case MessageType::kHeartbeat:
    case MessageType::kError:
    case MessageType::kClose:
      return kMinVersion;
  }
  return kMinVersion;
}

bool SentByClient(MessageType type) {
  switch (type) {
    case MessageType::kSubscribe:
    case MessageType::kRelease:
    case MessageType::kHeartbeat:
    case MessageType::kClose:
    case MessageType::kProduce:
      return true;
    case MessageType::kSubscribed:
    case MessageType::kError:
    case MessageType::kStreamGap:
    case MessageType::kProducing:
      return false;
  }
  return false;
}

std::string_view NameOf(MessageType type) {
  switch (type) {
    case MessageType::kSubscribe:
      return "SUBSCRIBE";
    case MessageType::kSubscribed:
      return "SUBSCRIBED";
    case MessageType::kRelease:
      return "RELEASE";
    case MessageType::kHeartbeat:
      return "HEARTBEAT";
    case MessageType::kError:
      return "ERROR";
    case MessageType::kClose:
      return "CLOSE";
    case MessageType::kStreamGap:
      return "STREAM_GAP";
    case MessageType::kProduce:
      return "PRODUCE";
    case MessageType::kProducing:
      return "PRODUCING";
  }
  return "?";
}

std::string_view NameOf(Mode mode) {
  switch (mode) {
    case Mode::kRecords:
      return "RECORDS";
    case Mode::kChunkStreams:
      return "CHUNK_STREAMS";
  }
  return "?";
}

std::string_view NameOf(StartPosition start) {
  switch (start) {
    case StartPosition::kEarliest:
      return "EARLIEST";
    case StartPosition::kLatest:
      return "LATEST";
    case StartPosition::kOffset:
      return "OFFSET";
  }
  return "?";
}

std::string_view NameOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadFrame:
      return "BAD_FRAME";
    case ErrorCode::kUnsupportedVersion:
      return "UNSUPPORTED_VERSION";
    case ErrorCode::kUnknownType:
      return "UNKNOWN_TYPE";
    case ErrorCode::kUnexpectedMessage:
      return "UNEXPECTED_MESSAGE";
    case ErrorCode::kNotAuthorized:
      return "NOT_AUTHORIZED";
    case ErrorCode::kUnknownTopic:
      return "UNKNOWN_TOPIC";
    case ErrorCode::kUnknownSubscription:
      return "UNKNOWN_SUBSCRIPTION";
    case ErrorCode::kBadRequest:
      return "BAD_REQUEST";
    case ErrorCode::kRecordTooLarge:
      return "RECORD_TOO_LARGE";
    case ErrorCode::kSubscriptionLimit:
      return "SUBSCRIPTION_LIMIT";
    case ErrorCode::kShuttingDown:
      return "SHUTTING_DOWN";
    case ErrorCode::kInternal:
      return "INTERNAL";
  }
  return "?";
}

std::string_view NameOf(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kRecords:
      return "RECORDS";
    case ObjectKind::kChunks:
      return "CHUNKS";
  }
  return "?";
}

}  // namespace sluice::brokerd::protocol
