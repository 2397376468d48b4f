"""What the app teaches and says, as data a teacher or translator edits without Python: the
lessons, the example programs, the interface text, the derivative rules and the error
explanations, with the small modules that read them."""
