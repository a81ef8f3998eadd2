import RedisClient
import Testing

@Suite("RedisEndpoint: redis:// and redis+unix:// URLs")
struct RedisEndpointTests {
    @Test func aTCPURLGivesHostPortPasswordAndDatabase() throws {
        let endpoint = try RedisEndpoint(parsing: "redis://:s%40cret%2Fx@cache.internal:6380/3")
        #expect(endpoint.address == .tcp(host: "cache.internal", port: 6380))
        #expect(endpoint.password == "s@cret/x")
        #expect(endpoint.database == 3)
    }

    @Test func theDefaultsArePort6379DatabaseZeroAndNoPassword() throws {
        #expect(
            try RedisEndpoint(parsing: "redis://localhost")
                == RedisEndpoint(address: .tcp(host: "localhost", port: 6379)))
        #expect(
            try RedisEndpoint(parsing: "redis://127.0.0.1:7000/")
                == RedisEndpoint(address: .tcp(host: "127.0.0.1", port: 7000)))
        #expect(try RedisEndpoint(parsing: "redis://[::1]:7001").address == .tcp(host: "::1", port: 7001))
    }

    @Test func aUnixURLGivesThePathAndTheDatabaseFromTheQuery() throws {
        let endpoint = try RedisEndpoint(parsing: "redis+unix:///run/redis/redis.sock?db=2")
        #expect(endpoint == RedisEndpoint(address: .unix(path: "/run/redis/redis.sock"), database: 2))
        #expect(try RedisEndpoint(parsing: "redis+unix://:pw@/tmp/r.sock").password == "pw")
    }

    @Test func theDescriptionRedactsThePassword() throws {
        let endpoint = try RedisEndpoint(parsing: "redis://:hunter2@db:6379/1")
        #expect(endpoint.description == "redis://:***@db:6379/1")
        #expect(!"\(endpoint)".contains("hunter2"))
        #expect(try RedisEndpoint(parsing: "redis+unix://:hunter2@/s.sock").description == "redis+unix://:***@/s.sock")
    }

    @Test(arguments: [
        ("http://localhost:6379", "the scheme must be redis:// or redis+unix://"),
        ("redis://:6379", "the host is empty"),
        ("redis://host:0", "the port '0' is not a number in 1...65535"),
        ("redis://host:65536", "the port '65536' is not a number in 1...65535"),
        ("redis://host:http", "the port 'http' is not a number in 1...65535"),
        ("redis://host:6379/x", "the database 'x' is not a number >= 0"),
        ("redis://host:6379/-1", "the database '-1' is not a number >= 0"),
        ("redis+unix://", "the unix socket path is empty"),
        ("redis+unix://?db=1", "the unix socket path is empty"),
        ("redis+unix://relative.sock", "the unix socket path must be absolute"),
        ("redis+unix:///s.sock?db=two", "the database 'two' is not a number >= 0"),
        ("redis+unix:///s.sock?timeout=1", "the query item 'timeout' is not known"),
        ("redis://:bad%zz@host", "the password has a bad percent escape"),
        ("redis://admin:pw@host", "a user name is not supported"),
        ("redis://pw@host", "a user name is not supported")
    ])
    func aBadURLSaysWhatIsWrong(url: String, problem: String) {
        #expect {
            try RedisEndpoint(parsing: url)
        } throws: { error in
            guard let error = error as? RedisEndpointError else { return false }
            return error.problem.hasPrefix(problem) && error.description.hasPrefix("invalid Redis URL '")
        }
    }

    @Test(arguments: [
        "redis://cache:6380", "redis://10.0.0.7:6379/4", "redis://[::1]:7000", "redis+unix:///run/r.sock?db=9"
    ])
    func theDescriptionOfAnEndpointWithoutPasswordParsesBackToIt(url: String) throws {
        let endpoint = try RedisEndpoint(parsing: url)
        #expect(endpoint.description == url)
        #expect(try RedisEndpoint(parsing: endpoint.description) == endpoint)
    }

    @Test func anErrorNeverShowsThePassword() {
        do {
            _ = try RedisEndpoint(parsing: "redis://:hunter2@host:99999")
            Issue.record("parsed a bad port")
        } catch {
            #expect(error.url == "redis://***@host:99999")
            #expect(!error.description.contains("hunter2"))
        }
    }
}
