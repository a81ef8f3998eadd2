// Long polls and event streams across instances behind the shipped nginx config: a long poll
// that nginx hands to one instance is answered by a write that reaches another, and nginx waits
// for it longer than for any other answer (its `/changes` location); a stream's events pass
// nginx one by one, unbuffered.

import Dispatch
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuTestSupport
import NginxTestSupport
import Testing

extension AppTests {
    @Suite(
        "Scale-out: long polls and event streams across instances behind nginx",
        .enabled(if: FileManager.default.isExecutableFile(atPath: NginxProcess.executable)))
    struct ScaleOutLongPollTests {
        /// `instances` menu-servers on one Redis behind the shipped nginx config.
        private static func behindNginx(instances: Int) throws -> (ScaleOutCluster, NginxProcess) {
            let cluster = try ScaleOutCluster(instances: instances)
            do {
                let nginx = try NginxProcess(
                    deploymentConfig: ScaleOutNginxTests.examplePath, upstreams: cluster.instances.map(\.port))
                return (cluster, nginx)
            } catch {
                cluster.stop()
                throw error
            }
        }

        @Test
        func aLongPollThroughNginxIsAnsweredByAWriteOnAnotherInstance() throws {
            let (cluster, nginx) = try Self.behindNginx(instances: 3)
            defer {
                nginx.stop()
                cluster.stop()
            }
            let session = try cluster.direct(0).newSession()
            let answer = LiveLocked<LiveResponse?>(nil)
            let done = DispatchSemaphore(value: 0)
            let port = nginx.port
            Thread.detachNewThread {
                let response = try? LiveRawConnection(port: port, receiveTimeoutSeconds: 90).request(
                    "GET", "/changes?since=0&wait=30", headers: [("X-Session-Id", session)])
                answer.set(response)
                done.signal()
            }
            // Which instance holds it: the one whose metrics count a waiting long poll.
            func waiting(_ index: Int) -> Bool {
                (try? cluster.direct(index).request("GET", "/metrics").text.contains("\nmenu_streams_open 1\n")) == true
            }
            var holder: Int?
            #expect(
                eventually {
                    holder = (0 ..< 3).first(where: waiting)
                    return holder != nil
                }, "a long poll waits on one instance")
            let writer = ((holder ?? 0) + 1) % 3
            let toggle = try cluster.direct(writer).request(
                "POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)])
            #expect(toggle.status == 200)
            #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
            let response = try #require(answer.value)
            #expect(response.status == 200, "\(response)")
            let feed = try response.decode(LiveChanges.self)
            #expect(feed.revision == 1 && feed.changes.map(\.revision) == [1])
        }

        @Test
        func anEventStreamThroughNginxCarriesEachWriteOnAnyInstanceAsItHappens() throws {
            let (cluster, nginx) = try Self.behindNginx(instances: 3)
            defer {
                nginx.stop()
                cluster.stop()
            }
            let session = try cluster.direct(0).newSession()
            let stream = try LiveEventStream(
                port: nginx.port, "/changes?since=0", headers: [("X-Session-Id", session)], receiveTimeoutSeconds: 60)
            #expect(stream.head.status == 200 && stream.head.header("Content-Type") == "text/event-stream")
            #expect(stream.head.header("X-Accel-Buffering") == nil, "nginx acts on it and drops it")
            #expect(try stream.nextEvent()?.event == "open", "the first event passes nginx before any write")
            // One write on each instance in turn: each event arrives before the next write is made,
            // so nothing is held back in a proxy buffer.
            for (index, group) in ["drinks", "breakfast", "drinks"].enumerated() {
                let toggle = try cluster.direct(index).request(
                    "POST", "/groups/\(group)/toggle", headers: [("X-Session-Id", session)])
                #expect(toggle.status == 200)
                let event = try #require(try stream.nextEvent())
                #expect(event.event == "change" && event.id == "\(index + 1)", "\(event)")
            }
        }

        @Test
        func aLongPollThatRunsOutItsWaitThroughNginxGetsItsEmptyAnswerNotAGatewayTimeout() throws {
            let (cluster, nginx) = try Self.behindNginx(instances: 2)
            defer {
                nginx.stop()
                cluster.stop()
            }
            let session = try cluster.direct(0).newSession()
            // 12 s: longer than nginx waits for any other answer (10 s), shorter than for /changes.
            let response = try LiveRawConnection(port: nginx.port, receiveTimeoutSeconds: 90).request(
                "GET", "/changes?since=0&wait=12", headers: [("X-Session-Id", session)])
            #expect(response.status == 200, "\(response)")
            let feed = try response.decode(LiveChanges.self)
            #expect(feed.revision == 0 && feed.changes.isEmpty)
        }
    }
}
