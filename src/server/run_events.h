// RunEvents: turns one run's graph stream events into the run's legacy SSE events (the
// requested stream modes, AGENT_SERVER_API.md §5) and into the thread's v2 protocol events
// (§8.3), storing both. Not thread-safe: the graph calls on_event serially, and the run's
// worker calls the rest before and after invoke().
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server/event_log.h"
#include "server/run_request.h"
#include "server/state_refs.h"
#include "server/store.h"
#include "server/thread_streams.h"
#include "server/wire_format.h"
#include "tollgate/graph.h"

namespace tollgate::server {

class RunEvents {
 public:
  // Holds `record` and `request` by reference: the run's own, which outlive it.
  RunEvents(ServerStore& store, ThreadStreams& streams, std::shared_ptr<EventLog> log,
            const RunRecord& record, const RunRequest& request, std::string graph_id);
  RunEvents(ServerStore&, ThreadStreams&, std::shared_ptr<EventLog>, RunRecord&&, const RunRequest&,
            std::string) = delete;
  RunEvents(ServerStore&, ThreadStreams&, std::shared_ptr<EventLog>, const RunRecord&, RunRequest&&,
            std::string) = delete;

  // The graph stream modes this run needs, and whether subgraph events are wanted.
  std::vector<StreamMode> graph_modes() const;
  bool wants_subgraphs() const;
  // Whether the graph's `checkpoints` events must carry the state: only the legacy mode reads
  // it; the v2 event names the checkpoint.
  bool wants_checkpoint_values() const { return legacy_wants("checkpoints"); }

  // Whether each checkpoint is on disk before the graph's event about it (durability "sync"):
  // then a root `values` event is stored naming its checkpoint in place of the state
  // (state_refs.h).
  void refer_to_checkpoints(bool on) { refer_to_checkpoints_ = on; }

  void started();
  void on_event(const StreamEvent& event);
  void finished(const RunResult& result);
  void cancelled();
  void failed(const std::string& error, const std::string& message);
  // True once the graph produced any event.
  bool graph_emitted() const { return graph_emitted_; }
  // The texts of the lists of `state`, the state of checkpoint `checkpoint_id`, when the root
  // loop's last values event (or, before any, the thread's last run) showed that checkpoint:
  // each with the state's value, for state_event_json. A run's result and its thread's stored
  // values then copy a long conversation's text instead of writing it out again. Views of
  // texts this RunEvents keeps until take_lists().
  ValueTexts list_texts_of(const State& state, const std::string& checkpoint_id) const;

  // `size` bytes from `at` of a text others may hold too (the data of a values event).
  struct SharedText {
    std::shared_ptr<const std::string> buffer;
    std::size_t at = 0;
    std::size_t size = 0;
    SharedText() = default;
    explicit SharedText(std::string text)
        : buffer(std::make_shared<const std::string>(std::move(text))), size(buffer->size()) {}
    SharedText(std::shared_ptr<const std::string> of, std::size_t from, std::size_t length)
        : buffer(std::move(of)), at(from), size(length) {}
    std::string_view view() const {
      return buffer ? std::string_view(*buffer).substr(at, size) : std::string_view();
    }
  };
  // A list's text and where each of its items' text ends (from the list's first byte).
  struct ListText {
    SharedText text;
    std::vector<std::size_t> ends;
  };
  // The texts of the lists (append, add_messages) of one checkpoint's state, by key.
  struct CheckpointLists {
    std::string checkpoint_id;  // "": none
    std::map<std::string, ListText, std::less<>> lists;
    std::size_t bytes() const;  // what the lists hold: each text's whole buffer, once
  };
  // A run of a thread hands the next its last values event's lists when that event showed a
  // checkpoint's state: the next run's first values event (StreamEvent::values_base) and a
  // task starting on that checkpoint's state (StreamEvent::checkpoint_id) write the lists
  // from them, as a list is written from the previous values event's within a run.
  // carry_lists before the run's first event; take_lists after its last.
  void carry_lists(CheckpointLists lists);
  CheckpointLists take_lists();

 private:
  void legacy(const std::string& name, const Json& data);
  void legacy_json(const std::string& name, std::string data_json, const StateRef* state = nullptr);
  // legacy_json's entry, returned.
  LogEntryPtr legacy_entry(const std::string& name, std::string data_json, const StateRef* state);
  // Legacy `messages` mode: messages/metadata + cumulative messages/partial per streamed
  // message, messages/complete for each message new in the root values.
  void legacy_partial(const std::string& suffix, const Json& chunk, const Json& metadata);
  void legacy_complete(const Json& messages);  // the values' "messages"; null if none
  void v2(const std::string& method, const std::vector<std::string>& ns, const Json& data,
          const std::string& node = "");
  void v2_json(const std::string& method, const std::vector<std::string>& ns,
               std::string_view data_json, const std::string& node = "",
               const StateRef* state = nullptr);
  void v2_message_chunk(const std::vector<std::string>& ns, const Json& chunk);
  // The legacy `messages` modes' metadata of a chunk: the graph's (`given`) with the run's
  // keys, and its text. Made once for the chunks of a task (while `given` and the event's
  // namespace stay the same).
  struct LegacyMetadata {
    Json given;
    std::vector<std::string> ns;
    Json json;
    std::string text;
  };
  const LegacyMetadata& legacy_metadata(const Json& given, const std::vector<std::string>& ns);
  // The v2 namespace of the message chunks of checkpoint namespace `checkpoint_ns`: split
  // once for a task's chunks (valid until the next call).
  const std::vector<std::string>& messages_ns(const std::string& checkpoint_ns);
  void v2_finish_messages(const std::vector<std::string>& ns, const Json& node_output);
  void v2_interrupts(const std::vector<std::string>& ns, const Json& interrupts);
  bool legacy_wants(std::string_view mode) const { return modes_.count(mode) > 0; }

  ServerStore& store_;
  ThreadStreams& streams_;
  std::shared_ptr<EventLog> log_;
  const RunRecord& record_;
  const RunRequest& request_;
  std::string graph_id_;
  std::set<std::string, std::less<>> modes_;
  bool v2_enabled_;
  std::int64_t next_id_ = 0;
  bool graph_emitted_ = false;
  bool refer_to_checkpoints_ = false;
  std::string checkpoint_named_;  // by the root `checkpoints` event just before, until the next
  bool root_interrupt_update_seen_ = false;
  bool root_interrupt_values_seen_ = false;
  std::set<std::string> v2_interrupts_sent_;
  std::map<std::string, Json> partial_messages_;  // legacy `messages` mode, by message id
  std::set<std::string> completed_messages_;      // ids known complete (seeded from the thread)
  bool completed_seeded_ = false;

  // A message being streamed on the v2 channel, by message id.
  struct OpenMessage {
    std::vector<std::string> ns;
    std::string text;
    bool text_started = false;
    std::map<int, Json> tool_calls;  // block index -> {"id","name","args" (string)}
  };
  std::map<std::string, OpenMessage> open_messages_;
  std::optional<LegacyMetadata> legacy_metadata_;  // the last one made
  // messages_ns(): the last checkpoint namespace split and its segments.
  std::string messages_ns_of_;
  std::vector<std::string> messages_ns_;

  // The values the last `values` event showed, with that event's data, held until an event
  // that carries no state: the tasks of the next step start on those values (their inputs are
  // the state, with a few private channels more), and a value held here is written from its
  // text. While a value is held, the graph cannot change it in place (a channel changes in
  // place only a value nobody else holds) nor free it, so the same value means the same text.
  struct ValueSpan {
    JsonPtr value;
    std::size_t at = 0;  // where its text is in the event's data
    std::size_t size = 0;
  };
  struct ShownState {
    std::vector<std::string> ns;
    std::shared_ptr<const std::string> text;  // the event's data
    std::vector<ValueSpan> values;
  };
  std::optional<ShownState> shown_;
  // Appends event_json(state.to_json()) to `out` without the copy, each value the shown state
  // holds copied from its text; `spans`, if given, gets where each value's text is in `out`.
  // With `lists` (a root `values` event, `shown_event`), a list is written from the text it
  // had in the loop's previous one (or in the checkpoint the loop loaded, for its first) where
  // its first items did not change (StreamEvent::unchanged_items), and `lists` gets each list
  // written, its text's place in `out` (SharedText::at, size) without a buffer. A root task
  // start's state (`task_event`) takes the kept lists of the checkpoint it is, or of the one its
  // loop loaded as far as its lists are unchanged since.
  void write_state(std::string& out, const std::vector<std::string>& ns, const State& state,
                   std::vector<ValueSpan>* spans,
                   std::map<std::string, ListText, std::less<>>* lists,
                   const StreamEvent* shown_event, const StreamEvent* task_event);
  // Emits a `values` event of its event's state on the v2 stream (when on) and returns its
  // data: written once, into the v2 event's text (or a text of its own), which shown_ and a
  // root loop's kept lists then view.
  // `legacy_name`, when not empty, names the legacy `values` event that shows it too.
  SharedText show_values(const StreamEvent& event, const StateRef* state,
                         const std::string& legacy_name);
  // Appends a task start's data to `out`; for a task on the step's state, sets where its
  // input's text is in that data. Without `with_state`, that input is left out (its place is
  // empty, *input_size 0): the data as the store keeps it, which names the state's checkpoint.
  void write_task_start(std::string& out, const StreamEvent& event, std::size_t* input_at,
                        std::size_t* input_size, bool with_state = true);
  // The lists of the root loop's last `values` event, by key, with that event's
  // StreamEvent::loop and values_index, and the checkpoint whose state it showed ("" if not
  // known); or, before the first, the lists carried from the thread's last run.
  std::map<std::string, ListText, std::less<>> list_texts_;
  std::uint64_t list_texts_loop_ = 0;
  std::uint64_t list_texts_index_ = 0;
  std::string list_texts_checkpoint_;
  std::size_t last_state_size_ = 0;  // of the last state written
};

// The lists each thread's last run showed (RunEvents::take_lists), for the thread's next run
// (RunEvents::carry_lists): kept for the threads that ran last, at most `threads` of them and
// `bytes` of text, the oldest let go first. Thread-safe.
class CarriedLists {
 public:
  CarriedLists(std::size_t threads, std::size_t bytes) : threads_(threads), bytes_kept_(bytes) {}
  // The thread's lists, taken out (none: an empty checkpoint id).
  RunEvents::CheckpointLists take(const std::string& thread_id);
  void keep(const std::string& thread_id, RunEvents::CheckpointLists lists);
  std::size_t size();

 private:
  void forget_locked(const std::string& thread_id);

  std::mutex mutex_;
  std::size_t threads_;
  std::size_t bytes_kept_;
  std::size_t bytes_ = 0;
  std::map<std::string, RunEvents::CheckpointLists> lists_;
  std::deque<std::string> order_;  // oldest first
};

}  // namespace tollgate::server
