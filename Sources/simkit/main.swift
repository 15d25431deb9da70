import SimKitCommand

SimKitCommand.main()   // the reference SDK and its mutants; a package adds its own cores: main(sdks: ["mine": MySDK.self])
