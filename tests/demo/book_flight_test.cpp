// book_flight: the demo tool that asks through a form card before booking, run inside the
// demo agent (demo model, memory checkpoints) as the server runs it.
#include "demo/book_flight.h"

#include <gtest/gtest.h>

#include "demo/demo_model.h"
#include "tollgate/agent.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

class BookFlightTest : public ::testing::Test {
 protected:
  static std::shared_ptr<CompiledGraph> demo_agent() {
    AgentOptions options;
    options.model = make_demo_model();
    options.tools = {make_book_flight_tool()};
    options.checkpointer = make_memory_saver();
    return create_agent(std::move(options));
  }
  std::shared_ptr<CompiledGraph> agent_ = demo_agent();
  RunConfig thread_ = [] {
    RunConfig config;
    config.thread_id = "book-flight";
    return config;
  }();

  RunResult ask() {
    return agent_->invoke(Json{{"messages", {human_message("book a flight to lisbon")}}}, thread_);
  }
  RunResult answer(Json value) {
    Command resume;
    resume.resume = std::move(value);
    return agent_->invoke(resume, thread_);
  }
  // The ToolMessage of the run's last tool call.
  static Json tool_result(const RunResult& done) {
    for (auto it = done.values["messages"].rbegin(); it != done.values["messages"].rend(); ++it) {
      if ((*it)["type"] == "tool") return *it;
    }
    return Json();
  }
};

TEST_F(BookFlightTest, PausesOnAFlightBookingFormCardWithEveryFieldKind) {
  const RunResult paused = ask();
  ASSERT_EQ(paused.interrupts.size(), 1u);
  const Json& form = paused.interrupts[0].value;
  EXPECT_EQ(form["formType"], "flight_booking");
  EXPECT_EQ(form["title"], "Book a flight to Lisbon");
  EXPECT_EQ(form["context"]["to"], "Lisbon");
  std::vector<std::string> kinds;
  for (const Json& f : form["fields"]) kinds.push_back(f["type"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"text", "date", "select", "number", "currency", "checkbox", "textarea"}));
  EXPECT_EQ(form["responseSchema"]["properties"]["passengers"]["maximum"], 9);
  EXPECT_EQ(form, flight_booking_form("Berlin", "Lisbon"));
}

TEST_F(BookFlightTest, AnApprovedFormBooksWhatThePersonFilledIn) {
  ask();
  const RunResult done = answer(Json::parse(R"({"approved": true, "values": {"traveller": "Ana Reis",
      "date": "2027-02-03", "cabin": "business", "passengers": 2, "budget": 950.5, "window_seat": true}})"));
  EXPECT_TRUE(done.interrupts.empty());
  EXPECT_EQ(message_text(tool_result(done)),
            "Booked Berlin to Lisbon on 2027-02-03 for Ana Reis, business, 2 passengers, window seat, "
            "budget 950.5 EUR.");
}

TEST_F(BookFlightTest, ADeclinedFormBooksNothing) {
  ask();
  const RunResult done = answer(Json{{"approved", false}, {"values", Json::object()}});
  EXPECT_EQ(message_text(tool_result(done)), "The person declined the booking of a flight from Berlin to Lisbon.");
}

TEST_F(BookFlightTest, AnAnswerWithoutApprovedIsAnErrorResultNamingTheShape) {
  ask();
  const Json result = tool_result(answer(Json{{"seat", "12A"}}));
  EXPECT_EQ(result.value("status", ""), "error");
  EXPECT_NE(message_text(result).find("expected {\"approved\": true or false"), std::string::npos);
}

}  // namespace
}  // namespace tollgate
