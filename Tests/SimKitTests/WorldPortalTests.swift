import Testing
@testable import SimKit

/// `portal` (SPEC §1.5, P6): a captive portal or a proxy answers a selected device's
/// requests in the server's place, with an answer that is not Rollup's.
@Suite struct WorldPortalTests {
    static let h = Ms.hour, s = Ms.second

    @Test("a portal answers in the server's place: the server never sees the request, the SDK gets the wire's answer and neither locks nor unlocks")
    func portalAnswersInTheServersPlace() throws {
        let h = Self.h
        let world = WT.run(WT.setup(devices: 2, until: 4 * h, [
            .at(0, WT.person(.launch)),
            .at(h, .portal(WT.dev(0), answers: .forbidden, forMs: h)),
            .at(h + Ms.minute, WT.person(.launch)),
        ]))
        let t = DeviceTrace(world, 0)
        #expect(t.records.contains { $0.time == h && $0.event == .fault(.portal(form: NotRollup.forbidden.rawValue, until: 2 * h)) })
        #expect(t.records.contains { $0.time == 2 * h && $0.event == .fault(.portalEnded) })
        let check = try #require(t.served.first { $0.time > h && $0.kind == .check })
        #expect(check.reply.answer == .notRollup && check.reply.notRollup == .forbidden)
        #expect(check.reply.servedAt == ServerReply.none && check.reply.credential.isNone)
        #expect(t.delivered.contains { $0.time > h && $0.kind == .check && $0.answer == .notRollup })
        #expect(t.storeTimes(.lock).isEmpty, "a bare 403 is no verdict (P6)")
        // The other device was not behind the portal: the server judged its check.
        let other = try #require(DeviceTrace(world, 1).served.first { $0.time > h && $0.kind == .check })
        #expect(other.reply.answer == .ok)
    }

    @Test("without 'answers', each request's answer is drawn from the seed among the forms; a world with no portal keeps its arrays empty")
    func drawnFormsAndNoCostWithout() {
        let plain = WT.run([.at(0, WT.person(.launch))])
        #expect(plain.faults.portal.until.isEmpty && plain.faults.serverAnsweredUntil == 0)
        var forms = Set<NotRollup>()
        let world = WT.run(WT.setup(devices: 20, until: 3 * Self.h, [
            .at(0, WT.person(.launch)),
            .at(Self.h, .portal(.all, forMs: Self.h)),
            .at(Self.h + Ms.minute, WT.person(.launch)),
            .at(Self.h + 2 * Ms.minute, WT.person(.query)),
        ]))
        for d in 0..<20 { for r in DeviceTrace(world, DeviceIndex(d)).served { if let f = r.reply.notRollup { forms.insert(f) } } }
        #expect(forms.count >= 4, "drawn forms: \(forms)")
    }

    @Test("what a portal answers is what a real network delivers: a status, headers and a body that carry no verdict")
    func wireForms() {
        #expect(NotRollup.loginPage.status == 200 && NotRollup.loginPage.header("content-type")?.hasPrefix("text/html") == true)
        #expect(NotRollup.redirect.status == 302 && NotRollup.redirect.header("Location") != nil && NotRollup.redirect.body.isEmpty)
        #expect([NotRollup.unauthorized, .forbidden, .proxyAuthentication].map(\.status) == [401, 403, 407])
        #expect(NotRollup.proxyAuthentication.header("Proxy-Authenticate") != nil)
        #expect(NotRollup.cutShort.status == 200 && !NotRollup.cutShort.bodyText.hasSuffix("}"))
        for f in NotRollup.allCases {
            let body = f.bodyText
            #expect(!body.contains("served_at\"") && !body.contains("app_disabled") && !body.contains("app_key"), "\(f) carries Rollup's words")
        }
        #expect(MemoryLayout<ServerReply>.stride == 24, "a reply stays 24 bytes")
        #expect(!Answer.notRollup.isVerdict && !Answer.notRollup.isLockError && Answer.notRollup.isTransient)
    }
}
